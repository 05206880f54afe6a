/* GPT-2 BPE (include/ridge/bpe.h).
 *
 * usage: test-bpe DATA_DIR   (tests/data: bpe-tiny/ holds a 271-token vocabulary, make.py)
 *
 * 1. The tiny vocabulary: hand-derived encodings that exercise the merge order (lowest rank
 *    first, left to right, repeated), the pattern's splits, bytes that are not UTF-8, and a
 *    plain-C transcription of GPT-2's bpe() as the reference over random words.
 * 2. The real vocabulary when installed (else SKIP): known ids, round trips over Debian's
 *    license texts and random bytes, the split points.
 * 3. Hostile vocabulary files: each refused with RIDGE_EFORMAT and a message naming the file
 *    and the problem.
 */
#include <glob.h>
#include <stdint.h>
#include <unistd.h>

#include "test.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* The id of the token whose bytes are s (by a scan of the decoding table). */
static uint32_t id_of(const ridge_bpe *b, const char *s)
{
    size_t n = strlen(s), len;
    for (uint32_t i = 0; i < ridge_bpe_vocab_size(b); i++) {
        const uint8_t *p = ridge_bpe_token(b, i, &len);
        if (len == n && !memcmp(p, s, n)) return i;
    }
    return RIDGE_BPE_NO_TOKEN;
}

/* A small cache (many collisions) that round_trip shares between the tiny and the real
 * vocabulary, so it must notice the switch. */
static ridge_bpe_cache *shared;

/* Encodes text[0..len) and decodes it back; checks the round trip, and that encoding through
 * the shared cache gives the same ids. Returns the id count. */
static size_t round_trip(const ridge_bpe *b, const void *text, size_t len, uint32_t *ids)
{
    size_t n = 0, dl = 0, cn = 0;
    CHECK_OK(ridge_bpe_encode(b, text, len, ids, &n));
    uint32_t *cids = malloc((len + 1) * sizeof *cids);
    CHECK_OK(ridge_bpe_encode_cached(b, shared, text, len, cids, &cn));
    CHECKF(cn == n && !memcmp(cids, ids, n * sizeof *ids), "cached encoding differs");
    free(cids);
    uint8_t *back = malloc(len + 1);
    CHECK_OK(ridge_bpe_decode(b, ids, n, back, len + 1, &dl));
    CHECKF(dl == len && !memcmp(back, text, len), "round trip of %zu bytes gave %zu", len, dl);
    free(back);
    return n;
}

/* Checks encode(text) is exactly the tokens named (bytes strings), NULL-terminated. */
static void expect(const ridge_bpe *b, const char *text, const char *const *want)
{
    uint32_t ids[256];
    size_t n = round_trip(b, text, strlen(text), ids), k = 0;
    for (; want[k]; k++) {
        uint32_t id = id_of(b, want[k]);
        CHECKF(id != RIDGE_BPE_NO_TOKEN, "'%s' is not a token", want[k]);
        CHECKF(k < n && ids[k] == id, "'%s': token %zu is %u, want %u ('%s')", text, k,
               k < n ? ids[k] : 0, id, want[k]);
    }
    CHECKF(n == k, "'%s': %zu tokens, want %zu", text, n, k);
}

/* ---- GPT-2's bpe(), transcribed plainly: merge every occurrence of the lowest-ranked pair,
 * left to right, until no pair has a rank. On byte strings; merges as in bpe-tiny. */
static const char *const tiny_merges[][2] = {
    {"h", "e"}, {"l", "l"}, {" ", "t"}, {" t", "he"}, {"ll", "o"}, {"he", "llo"}, {"a", "a"},
    {" ", " "}, {"\xc3", "\xa9"}, {"\n", "\n"}, {"'", "s"}, {"4", "2"}, {"aa", "a"},
    {" ", "hello"}};
#define NTINY (sizeof tiny_merges / sizeof tiny_merges[0])

static size_t ref_bpe(const char *word, char sym[][64])
{
    size_t n = strlen(word);
    for (size_t i = 0; i < n; i++) sym[i][0] = word[i], sym[i][1] = 0;
    for (;;) {
        size_t best = NTINY;
        for (size_t i = 0; i + 1 < n; i++)
            for (size_t r = 0; r < best; r++)
                if (!strcmp(sym[i], tiny_merges[r][0]) && !strcmp(sym[i + 1], tiny_merges[r][1]))
                    best = r;
        if (best == NTINY) return n;
        size_t k = 0;
        for (size_t i = 0; i < n; k++) {
            if (i + 1 < n && !strcmp(sym[i], tiny_merges[best][0]) &&
                !strcmp(sym[i + 1], tiny_merges[best][1])) {
                char s[64];
                snprintf(s, sizeof s, "%s%s", sym[i], sym[i + 1]);
                strcpy(sym[k], s);
                i += 2;
            } else {
                if (k != i) strcpy(sym[k], sym[i]);
                i++;
            }
        }
        n = k;
    }
}

static void test_tiny(const char *dir)
{
    char e[4096], v[4096];
    snprintf(e, sizeof e, "%s/bpe-tiny/encoder.json", dir);
    snprintf(v, sizeof v, "%s/bpe-tiny/vocab.bpe", dir);
    ridge_bpe *b = NULL;
    CHECK_OK(ridge_bpe_load(e, v, &b));
    if (!b) return;
    CHECK(ridge_bpe_vocab_size(b) == 271);
    CHECK(ridge_bpe_num_merges(b) == NTINY);
    CHECK(ridge_bpe_eot(b) == 270);
    size_t len;
    const uint8_t *t = ridge_bpe_token(b, 270, &len);
    CHECK(t && len == 13 && !memcmp(t, "<|endoftext|>", 13));
    CHECK(ridge_bpe_token(b, 271, &len) == NULL);
    /* GPT-2's byte order: '!' is id 0, byte 0 is id 188 (the first non-printable) */
    t = ridge_bpe_token(b, 0, &len);
    CHECK(t && len == 1 && t[0] == '!');
    t = ridge_bpe_token(b, 188, &len);
    CHECK(t && len == 1 && t[0] == 0);

    if (!ridge_bpe_can_encode()) {
        SKIP("encoding: this build has no PCRE2");
        ridge_bpe_destroy(b);
        return;
    }
    expect(b, "hello", (const char *[]){"hello", NULL});
    expect(b, "hello the hello", (const char *[]){"hello", " the", " hello", NULL});
    /* "aa" merges left to right (aa aa a), then (aa, a), ranked later, joins the last two */
    expect(b, "aaaaa", (const char *[]){"aa", "aaa", NULL});
    expect(b, "aaaa", (const char *[]){"aa", "aa", NULL});
    /* é (C3 A9) is merged from its bytes; ll before llo */
    expect(b, "h\xc3\xa9llo", (const char *[]){"h", "\xc3\xa9", "llo", NULL});
    /* the pattern: contractions, a space joins the number after it */
    expect(b, "it's 42", (const char *[]){"i", "t", "'s", " ", "42", NULL});
    /* \s+(?!\S) leaves the last whitespace character to the word after it, so "\n\n" is
     * split and never becomes the token ĊĊ; a space before a word joins it */
    expect(b, "a  \n\nb", (const char *[]){"a", "  ", "\n", "\n", "b", NULL});
    expect(b, "a\n\n", (const char *[]){"a", "\n\n", NULL});
    expect(b, "x   the", (const char *[]){"x", "  ", " the", NULL});
    /* bytes that are not UTF-8 fall back to byte tokens (a piece of their own) */
    expect(b, "x\xff\xfey", (const char *[]){"x", "\xff", "\xfe", "y", NULL});
    expect(b, "\xc3", (const char *[]){"\xc3", NULL});
    /* the end-of-text text is ordinary text (tiktoken's encode_ordinary) */
    uint32_t ids[64];
    size_t n;
    CHECK_OK(ridge_bpe_encode(b, "<|endoftext|>", 13, ids, &n));
    CHECK(n == 13);
    for (size_t i = 0; i < n; i++) CHECK(ids[i] != 270);
    CHECK_OK(ridge_bpe_encode(b, "", 0, NULL, &n));
    CHECK(n == 0);

    /* the heap-ordered merge against GPT-2's bpe() over random words (one piece each) */
    const char alpha[] = "aaaahelotsx";
    for (int trial = 0; trial < 3000; trial++) {
        char word[48], sym[48][64];
        size_t wl = 1 + rnd() % 40, k = 0;
        if (rnd() % 2) word[k++] = ' ';
        while (k < wl) word[k++] = alpha[rnd() % (sizeof alpha - 1)];
        word[k] = 0;
        size_t rn = ref_bpe(word, sym);
        CHECK_OK(ridge_bpe_encode(b, word, k, ids, &n));
        int same = n == rn;
        for (size_t i = 0; same && i < n; i++) same = ids[i] == id_of(b, sym[i]);
        CHECKF(same, "'%s': %zu tokens, GPT-2's bpe() gives %zu", word, n, rn);
        if (!same) break;
    }
    /* round trips of random bytes */
    uint8_t buf[512];
    uint32_t big[512];
    for (int trial = 0; trial < 300; trial++) {
        size_t bl = rnd() % sizeof buf;
        for (size_t i = 0; i < bl; i++) buf[i] = trial % 2 ? (uint8_t)rnd() : (uint8_t)" ahel\n\t'42"[rnd() % 10];
        round_trip(b, buf, bl, big);
    }
    /* cutting at every split point changes no id, over random whitespace-heavy text */
    for (int trial = 0; trial < 2000; trial++) {
        static const char *const parts[] = {" ", "\n", "\t", "a", "he", "1", ".", "'s", "\xc3\xa9",
                                            "\r", "\xff", "\xc2\xa0"};
        size_t bl = 0, n1 = 0, n2 = 0, k;
        while (bl < 100) {
            const char *p = parts[rnd() % (sizeof parts / sizeof parts[0])];
            memcpy(buf + bl, p, strlen(p));
            bl += strlen(p);
        }
        CHECK_OK(ridge_bpe_encode(b, buf, bl, big, &n1));
        uint32_t cut[512];
        for (size_t at = 0; at < bl; at = ridge_bpe_split_point(buf, bl, at + 1)) {
            size_t end = ridge_bpe_split_point(buf, bl, at + 1);
            CHECK_OK(ridge_bpe_encode(b, buf + at, end - at, cut + n2, &k));
            n2 += k;
        }
        int same = n1 == n2 && !memcmp(big, cut, n1 * sizeof *cut);
        CHECKF(same, "cut at the split points: %zu ids, whole: %zu ('%.*s')", n2, n1, (int)bl,
               buf);
        if (!same) break;
    }
    /* decode: query, too small, bad id */
    uint32_t two[2] = {id_of(b, "hello"), 270};
    size_t dl;
    char out[32];
    CHECK_OK(ridge_bpe_decode(b, two, 2, NULL, 0, &dl));
    CHECK(dl == 18);
    CHECK(ridge_bpe_decode(b, two, 2, out, 17, &dl) == RIDGE_EOVERFLOW);
    CHECK_OK(ridge_bpe_decode(b, two, 2, out, sizeof out, &dl));
    CHECK(!memcmp(out, "hello<|endoftext|>", 18));
    two[1] = 271;
    CHECK(ridge_bpe_decode(b, two, 2, out, sizeof out, &dl) == RIDGE_EINVAL);
    CHECK(strstr(ridge_last_error(), "ids[1] = 271") != NULL);
    ridge_bpe_destroy(b);
}

/* ---- the real vocabulary ---------------------------------------------------------------- */

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    uint8_t *p = malloc((size_t)n + 1);
    *len = p ? fread(p, 1, (size_t)n, f) : 0;
    fclose(f);
    return p;
}

static void test_real(void)
{
    char dir[4096];
    if (ridge_bpe_find(NULL, dir, sizeof dir)) {
        SKIP("GPT-2 vocabulary not installed: %s", ridge_last_error());
        return;
    }
    ridge_bpe *b = NULL;
    CHECK_OK(ridge_bpe_load_dir(NULL, &b));
    if (!b) return;
    CHECK(ridge_bpe_vocab_size(b) == 50257);
    CHECK(ridge_bpe_eot(b) == 50256);
    CHECK(ridge_bpe_num_merges(b) == 50000);
    if (!ridge_bpe_can_encode()) {
        SKIP("encoding: this build has no PCRE2");
        ridge_bpe_destroy(b);
        return;
    }
    /* ids from OpenAI's tokenizer (tiktoken "gpt2" and gpt-3-encoder agree on these) */
    static const struct { const char *text; uint32_t ids[8]; size_t n; } known[] = {
        {"Hello world", {15496, 995}, 2},
        {" the", {262}, 1},
        {"<|endoftext|>", {27, 91, 437, 1659, 5239, 91, 29}, 7},
        {"I'm 42", {40, 1101, 5433}, 3},
        {"\n\n", {628}, 1},
    };
    uint32_t ids[4096];
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        size_t n = round_trip(b, known[k].text, strlen(known[k].text), ids);
        int same = n == known[k].n;
        for (size_t i = 0; same && i < n; i++) same = ids[i] == known[k].ids[i];
        CHECKF(same, "'%s': got %zu tokens (first %u)", known[k].text, n, n ? ids[0] : 0);
    }
    /* U+0085 and U+2028 are White_Space (tiktoken's \s): "a", U+0085, U+0085 "b" are four
     * pieces, U+FEFF is not: "a", " U+FEFF", "b" */
    static const char *const ws[][5] = {{"a\xc2\x85\xc2\x85" "b", "a", "\xc2\x85", "\xc2\x85", "b"},
                                        {"a\xe2\x80\xa8\xe2\x80\xa8" "b", "a", "\xe2\x80\xa8",
                                         "\xe2\x80\xa8", "b"},
                                        {"a \xef\xbb\xbf" "b", "a", " \xef\xbb\xbf", "b", NULL}};
    for (size_t k = 0; k < 3; k++) {
        size_t n = 0, m = 0, p;
        CHECK_OK(ridge_bpe_encode(b, ws[k][0], strlen(ws[k][0]), ids, &n));
        uint32_t parts[64];
        for (int q = 1; q < 5 && ws[k][q]; q++) {
            CHECK_OK(ridge_bpe_encode(b, ws[k][q], strlen(ws[k][q]), parts + m, &p));
            m += p;
        }
        CHECKF(n == m && !memcmp(ids, parts, n * sizeof *ids), "white space case %zu", k);
    }
    /* Debian's license texts: round trip, and cut at every split point gives the same ids */
    const char *const files[] = {"/usr/share/common-licenses/GPL-3",
                                 "/usr/share/common-licenses/Apache-2.0",
                                 "/usr/share/common-licenses/Artistic",
                                 "/usr/share/common-licenses/MPL-2.0"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        size_t len;
        uint8_t *text = slurp(files[f], &len);
        if (!text) {
            SKIP("%s not found", files[f]);
            continue;
        }
        uint32_t *whole = malloc(len * sizeof *whole), *cut = malloc(len * sizeof *cut);
        size_t n = round_trip(b, text, len, whole), m = 0, cuts = 0;
        CHECKF(n > len / 6 && n < len / 2, "%s: %zu bytes gave %zu tokens", files[f], len, n);
        for (size_t at = 0; at < len; cuts++) {
            size_t end = ridge_bpe_split_point(text, len, at + 1), k = 0;
            CHECK_OK(ridge_bpe_encode(b, text + at, end - at, cut + m, &k));
            m += k;
            at = end;
        }
        CHECKF(m == n && !memcmp(whole, cut, n * sizeof *cut), "%s: cut in %zu parts at the "
               "split points: %zu tokens, whole: %zu", files[f], cuts, m, n);
        printf("%s: %zu bytes, %zu tokens, cut in %zu parts\n", files[f], len, n, cuts);
        CHECK(cuts > len / 200);
        free(whole);
        free(cut);
        free(text);
    }
    /* every license text Debian ships round-trips */
    glob_t g;
    if (glob("/usr/share/common-licenses/*", 0, NULL, &g) == 0) {
        for (size_t f = 0; f < g.gl_pathc; f++) {
            size_t len;
            uint8_t *text = slurp(g.gl_pathv[f], &len);
            uint32_t *t = text ? malloc((len + 1) * sizeof *t) : NULL;
            if (t) round_trip(b, text, len, t);
            free(t);
            free(text);
        }
        printf("round trips of the %zu files of /usr/share/common-licenses\n", g.gl_pathc);
        globfree(&g);
    } else {
        SKIP("/usr/share/common-licenses is empty");
    }
    /* random UTF-8 (from several scripts, spaces, digits, punctuation) and random bytes */
    static const uint32_t ranges[][2] = {{0x20, 0x7E}, {0xA0, 0x17F}, {0x391, 0x3C9},
                                         {0x400, 0x44F}, {0x4E00, 0x4E80}, {0x1F600, 0x1F64F},
                                         {0x660, 0x669}, {0x2000, 0x200B}, {9, 13}};
    uint8_t buf[2048];
    for (int trial = 0; trial < 400; trial++) {
        size_t bl = 0;
        while (bl + 4 < sizeof buf && rnd() % 300) {
            if (trial % 4 == 3) {
                buf[bl++] = (uint8_t)rnd();
                continue;
            }
            const uint32_t *r = ranges[rnd() % (sizeof ranges / sizeof ranges[0])];
            uint32_t c = r[0] + rnd() % (r[1] - r[0] + 1);
            if (c < 0x80) buf[bl++] = (uint8_t)c;
            else if (c < 0x800) buf[bl++] = (uint8_t)(0xC0 | c >> 6), buf[bl++] = (uint8_t)(0x80 | (c & 63));
            else if (c < 0x10000) {
                buf[bl++] = (uint8_t)(0xE0 | c >> 12);
                buf[bl++] = (uint8_t)(0x80 | (c >> 6 & 63));
                buf[bl++] = (uint8_t)(0x80 | (c & 63));
            } else {
                buf[bl++] = (uint8_t)(0xF0 | c >> 18);
                buf[bl++] = (uint8_t)(0x80 | (c >> 12 & 63));
                buf[bl++] = (uint8_t)(0x80 | (c >> 6 & 63));
                buf[bl++] = (uint8_t)(0x80 | (c & 63));
            }
        }
        round_trip(b, buf, bl, ids);
    }
    /* a long word: the heap keeps it O(n log n) (and it must round-trip) */
    static uint8_t word[1 << 16];
    for (size_t i = 0; i < sizeof word; i++) word[i] = (uint8_t)"abcdefghij"[rnd() % 10];
    uint32_t *wids = malloc(sizeof word * sizeof *wids);
    round_trip(b, word, sizeof word, wids);
    free(wids);
    ridge_bpe_destroy(b);
}

/* ---- hostile files ---------------------------------------------------------------------- */

static char tmp[64];

static void put(const char *name, const char *text)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", tmp, name);
    FILE *f = fopen(p, "wb");
    fputs(text, f);
    fclose(f);
}

/* The tiny vocabulary's encoder.json with `from` replaced by `to` (once). */
static char *tiny_json_edit(const char *dir, const char *from, const char *to)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/bpe-tiny/encoder.json", dir);
    size_t len;
    char *s = (char *)slurp(p, &len);
    if (!s) return NULL;
    s[len] = 0;
    char *at = strstr(s, from);
    if (!at) {
        free(s);
        return NULL;
    }
    char *r = malloc(len + strlen(to) + 1);
    sprintf(r, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
    free(s);
    return r;
}

/* Loading must fail with `status` and a message containing the file's name and `why`. */
static void refuse(const char *json_text, const char *bpe_text, ridge_status status,
                   const char *why)
{
    char e[128], v[128];
    snprintf(e, sizeof e, "%s/e.json", tmp);
    snprintf(v, sizeof v, "%s/v.bpe", tmp);
    if (json_text) put("e.json", json_text);
    if (bpe_text) put("v.bpe", bpe_text);
    ridge_bpe *b = (ridge_bpe *)1;
    ridge_status st = ridge_bpe_load(e, v, &b);
    const char *msg = ridge_last_error();
    CHECKF(st == status && b == NULL, "'%s': status %s", why, ridge_status_str(st));
    CHECKF(strstr(msg, why) && strstr(msg, json_text ? "e.json" : "v.bpe"),
           "want '%s' in: %s", why, msg);
}

static void test_hostile(const char *dir)
{
    snprintf(tmp, sizeof tmp, "/tmp/ridge-test-bpe-XXXXXX");
    if (!mkdtemp(tmp)) {
        CHECK(!"mkdtemp");
        return;
    }
    char p[4096];
    snprintf(p, sizeof p, "%s/bpe-tiny/vocab.bpe", dir);
    size_t len;
    char *good_bpe = (char *)slurp(p, &len);
    if (!good_bpe) {
        CHECK(!"tiny vocab.bpe");
        return;
    }
    good_bpe[len] = 0;
    put("v.bpe", good_bpe);
    struct { const char *from, *to, *why; } je[] = {
        {"{", "[", "expected '{'"},
        {"\"!\": 0", "\"!\": 0.5", "not an integer"},
        {"\"!\": 0", "\"!\": -1", "expected a token id"},
        {"\"!\": 0", "\"!\": 70000", "65536 or more"},
        {"\"!\": 0", "\"!\": 1", "id 1 given to two tokens"},
        {"\"!\": 0", "\"!\": 271", "id 271"},
        {"\"!\": 0", "\"\\x\": 0", "unknown escape"},
        {"\"!\": 0", "\"\\u01\": 0", "four hex digits"},
        {"\"!\": 0", "\"\\ud800\": 0", "high surrogate"},
        {"\"!\": 0", "\"\\udc00\": 0", "low surrogate"},
        {"\"!\": 0", "\"\\u0400\": 0", "U+0400 is not one of GPT-2's byte symbols"},
        {"\"!\": 0", "\"\": 0", "an empty token"},
        {"\"!\": 0", "\"\\\"\": 0", "a token that appears twice"},
        {"\"!\": 0", "\"\xff\": 0", "invalid UTF-8"},
        {"\"!\": 0", "\"!\n\": 0", "control character"},
        {"\"!\": 0", "\"!\" 0", "expected ':'"},
        {"\"!\": 0,", "\"!\": 0 ", "expected ',' or '}'"},
        {"270}", "270} x", "text after the JSON object"},
        {"270}", "270", "expected ',' or '}'"},
        {"\"<|endoftext|>\": 270}", "\"!\": 270}", "a token that appears twice"},
    };
    for (size_t i = 0; i < sizeof je / sizeof je[0]; i++) {
        char *j = tiny_json_edit(dir, je[i].from, je[i].to);
        CHECKF(j != NULL, "edit %zu", i);
        if (j) refuse(j, NULL, RIDGE_EFORMAT, je[i].why);
        free(j);
    }
    refuse("{}", NULL, RIDGE_EFORMAT, "no tokens");
    refuse("", NULL, RIDGE_EFORMAT, "expected '{'");
    refuse("{\"a\": 0, \"b\": 1}", NULL, RIDGE_EFORMAT, "byte 0x00");
    char *j = tiny_json_edit(dir, "\"\\u0100\": 188", "\"\\u0100\\u0100\": 188");
    if (j) refuse(j, NULL, RIDGE_EFORMAT, "byte 0x00 (U+0100) is not a token");
    free(j);
    /* a token of 256 bytes */
    char longtok[600] = "{\"";
    for (int i = 0; i < 256; i++) strcat(longtok, "a");
    strcat(longtok, "\": 0}");
    refuse(longtok, NULL, RIDGE_EFORMAT, "longer than 255 bytes");
    /* vocab.bpe */
    snprintf(p, sizeof p, "%s/bpe-tiny/encoder.json", dir);
    char *good_json = (char *)slurp(p, &len);
    good_json[len] = 0;
    put("e.json", good_json);
    refuse(NULL, "#version: 0.2\nh e\nq z\n", RIDGE_EFORMAT,
           "line 3: the merge of 'q' and 'z' is not a token");
    refuse(NULL, "#version: 0.2\nh e\nhe llo\n", RIDGE_EFORMAT,
           "line 3: 'llo' is neither a byte nor made by an earlier merge");
    refuse(NULL, "#version: 0.2\nh e\nh e\n", RIDGE_EFORMAT, "line 3: the pair 'h e' is already");
    refuse(NULL, "#version: 0.2\nh e x\n", RIDGE_EFORMAT, "line 2: expected two symbols");
    refuse(NULL, "#version: 0.2\nhe\n", RIDGE_EFORMAT, "line 2: expected two symbols");
    refuse(NULL, "#version: 0.2\nh e\r\n", RIDGE_EFORMAT, "line 2: U+000D");
    refuse(NULL, "#version: 0.2\nh \xc3\n", RIDGE_EFORMAT, "line 2: invalid UTF-8");
    refuse(NULL, "#version: 0.2\nhello x\n", RIDGE_EFORMAT, "'hello' is neither");
    /* sizes: a file over the limit is refused before it is read */
    snprintf(p, sizeof p, "%s/v.bpe", tmp);
    CHECK(truncate(p, (off_t)RIDGE_BPE_MAX_FILE_BYTES + 1) == 0);
    refuse(NULL, NULL, RIDGE_EFORMAT, "more than");
    char e[128];
    snprintf(e, sizeof e, "%s/none.json", tmp);
    ridge_bpe *b;
    CHECK(ridge_bpe_load(e, p, &b) == RIDGE_EIO && strstr(ridge_last_error(), "none.json"));
    CHECK(ridge_bpe_find(tmp, p, sizeof p) == RIDGE_EIO);
    CHECK(strstr(ridge_last_error(), "--vocab") != NULL);
    CHECK(ridge_bpe_load(NULL, NULL, &b) == RIDGE_EINVAL);
    free(good_json);
    free(good_bpe);
    const char *names[] = {"e.json", "v.bpe"};
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", tmp, names[i]);
        remove(p);
    }
    rmdir(tmp);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "tests/data";
    CHECK_OK(ridge_bpe_cache_create(0, &shared));
    test_tiny(dir);
    test_real();
    test_tiny(dir); /* the cache now holds the real vocabulary's pieces */
    test_hostile(dir);
    ridge_bpe_cache_destroy(shared);
    return test_finish("test-bpe");
}
