ridge_add_sources(portable src/quant/quant.c src/quant/qmlp.c src/quant/qcnn.c)
