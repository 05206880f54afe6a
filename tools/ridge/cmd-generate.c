/* ridge generate: sample text from a GPT-2 checkpoint (the same as `ridge gpt2 generate`). */
#include "cli.h"
#include "gpt2-cli.h"

const char cmd_generate_summary[] = "sample text from a GPT-2 checkpoint (llm.c format)";

int cmd_generate(int argc, char **argv)
{
    return cmd_gpt2_generate(argc, argv);
}
