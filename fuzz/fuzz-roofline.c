/* ridge_roofline_load (the roofline cache, JSON) on arbitrary bytes. A profile that loads is
 * written back with ridge_roofline_to_json, which must parse again: what ridge accepts it
 * must also be able to store. */
#include "fuzz.h"
#include "ridge/perf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_file f;
    fuzz_file_open(&f, data, size);
    ridge_roofline r;
    if (ridge_roofline_load(f.path, &r) == RIDGE_OK) {
        size_t n = ridge_roofline_to_json(&r, NULL, 0);
        char *text = malloc(n + 1);
        if (!text) abort();
        ridge_roofline_to_json(&r, text, n + 1);
        ridge_roofline back;
        if (ridge_roofline_from_json(text, &back) != RIDGE_OK) {
            fprintf(stderr, "fuzz-roofline: a loaded profile does not round-trip: %s\n%s\n",
                    ridge_last_error(), text);
            abort();
        }
        free(text);
    }
    fuzz_file_close(&f);
    return 0;
}
