/* ridge train gpt2: the same as `ridge gpt2 train` (tools/ridge/cmd-gpt2.c). */
#include "cli.h"
#include "gpt2-cli.h"

int train_gpt2(int argc, char **argv)
{
    return cmd_gpt2_train(argc, argv);
}
