/* The GPT-2 subcommands that other command files reuse (`ridge generate`, `ridge train gpt2`). */
#ifndef RIDGE_GPT2_CLI_H
#define RIDGE_GPT2_CLI_H

/* argv[0] is the subcommand's name; options as `ridge gpt2 generate|train --help`. */
int cmd_gpt2_generate(int argc, char **argv);
int cmd_gpt2_train(int argc, char **argv);

#endif /* RIDGE_GPT2_CLI_H */
