ridge_add_sources(portable src/quant/qmlp.c)
