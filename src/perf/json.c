/* A recursive-descent JSON reader (RFC 8259 grammar, depth-limited) producing a tree of
 * ridge_json nodes, one malloc each. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "perf/json.h"

#define MAX_DEPTH 64

typedef struct parser {
    const char *start, *p;
    ridge_status status; /* first failure, RIDGE_OK while parsing goes well */
} parser;

static ridge_json *fail(parser *ps, const char *what)
{
    if (ps->status) return NULL;
    int line = 1, col = 1;
    for (const char *q = ps->start; q < ps->p; q++) {
        if (*q == '\n') line++, col = 1;
        else col++;
    }
    ps->status = ridge_error(RIDGE_EFORMAT, "json: line %d, column %d: %s", line, col, what);
    return NULL;
}

static ridge_json *node(parser *ps, ridge_json_type type)
{
    ridge_json *v = calloc(1, sizeof *v);
    if (!v && !ps->status) ps->status = ridge_error(RIDGE_ENOMEM, "json: out of memory");
    if (v) v->type = type;
    return v;
}

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

/* A string starting at the opening quote; returns a malloc'd unescaped copy. */
static char *parse_string(parser *ps)
{
    const char *s = ++ps->p; /* past the quote */
    size_t n = 0;
    while (*s && *s != '"') s += (*s == '\\' && s[1]) ? 2 : 1, n++;
    if (*s != '"') return (char *)fail(ps, "unterminated string");
    char *out = malloc(n + 1), *o = out;
    if (!out) return (char *)fail(ps, "out of memory");
    while (*ps->p != '"') {
        char c = *ps->p++;
        if ((unsigned char)c < 0x20) {
            free(out);
            return (char *)fail(ps, "control character in a string");
        }
        if (c != '\\') {
            *o++ = c;
            continue;
        }
        c = *ps->p++;
        unsigned u;
        switch (c) {
        case '"': case '\\': case '/': *o++ = c; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u':
            if (hex4(ps->p, &u)) {
                free(out);
                return (char *)fail(ps, "bad \\u escape");
            }
            ps->p += 4;
            *o++ = u < 0x80 ? (char)u : '?';
            break;
        default:
            free(out);
            return (char *)fail(ps, "bad escape in a string");
        }
    }
    ps->p++; /* the closing quote */
    *o = 0;
    return out;
}

static ridge_json *parse_value(parser *ps, int depth);

/* An array or object starting at its bracket; `obj` says which. */
static ridge_json *parse_container(parser *ps, int obj, int depth)
{
    ridge_json *v = node(ps, obj ? RIDGE_JSON_OBJECT : RIDGE_JSON_ARRAY);
    if (!v) return NULL;
    ridge_json **tail = &v->child;
    char close = obj ? '}' : ']';
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (obj) {
            if (*ps->p != '"') goto err;
            if (!(key = parse_string(ps))) goto err;
            skip_ws(ps);
            if (*ps->p != ':') {
                free(key);
                fail(ps, "expected ':' after a member name");
                goto err;
            }
            ps->p++;
        }
        ridge_json *e = parse_value(ps, depth + 1);
        if (!e) {
            free(key);
            goto err;
        }
        e->key = key;
        *tail = e;
        tail = &e->next;
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            return v;
        }
        goto err;
    }
err:
    fail(ps, obj ? "expected a member name, ',' or '}'" : "expected a value, ',' or ']'");
    ridge_json_free(v);
    return NULL;
}

static ridge_json *parse_value(parser *ps, int depth)
{
    if (depth > MAX_DEPTH) return fail(ps, "nested too deeply");
    skip_ws(ps);
    const char *p = ps->p;
    ridge_json *v;
    switch (*p) {
    case '{': return parse_container(ps, 1, depth);
    case '[': return parse_container(ps, 0, depth);
    case '"':
        if (!(v = node(ps, RIDGE_JSON_STRING))) return NULL;
        if (!(v->str = parse_string(ps))) {
            free(v);
            return NULL;
        }
        return v;
    case 't': case 'f': case 'n': {
        static const char *const words[] = {"true", "false", "null"};
        for (int i = 0; i < 3; i++) {
            size_t n = strlen(words[i]);
            if (strncmp(p, words[i], n) == 0) {
                if (!(v = node(ps, i == 2 ? RIDGE_JSON_NULL : RIDGE_JSON_BOOL))) return NULL;
                v->num = i == 0;
                ps->p += n;
                return v;
            }
        }
        return fail(ps, "expected a value");
    }
    default: {
        /* JSON's number grammar, checked here because strtod also takes hex, inf and '+' */
        const char *q = p;
        if (*q == '-') q++;
        if (*q == '0') q++;
        else if (*q >= '1' && *q <= '9') while (*q >= '0' && *q <= '9') q++;
        else return fail(ps, "expected a value");
        if (*q == '.') {
            if (!(*++q >= '0' && *q <= '9')) return fail(ps, "bad number");
            while (*q >= '0' && *q <= '9') q++;
        }
        if (*q == 'e' || *q == 'E') {
            q++;
            if (*q == '+' || *q == '-') q++;
            if (!(*q >= '0' && *q <= '9')) return fail(ps, "bad number");
            while (*q >= '0' && *q <= '9') q++;
        }
        char *end;
        errno = 0;
        double d = strtod(p, &end);
        if (end != q || errno == ERANGE) return fail(ps, "bad number");
        if (!(v = node(ps, RIDGE_JSON_NUMBER))) return NULL;
        v->num = d;
        ps->p = end;
        return v;
    }
    }
}

/* Parses `text` as one value, or with `many` as a sequence of values wrapped in an array. */
static ridge_status parse_text(const char *text, int many, ridge_json **out)
{
    if (!out) return ridge_error(RIDGE_EINVAL, "json_parse: out is NULL");
    *out = NULL;
    if (!text) return ridge_error(RIDGE_EINVAL, "json_parse: text is NULL");
    parser ps = {text, text, RIDGE_OK};
    ridge_json *all = many ? node(&ps, RIDGE_JSON_ARRAY) : NULL, **tail = all ? &all->child : NULL;
    if (many && !all) return ps.status;
    for (;;) {
        ridge_json *v = parse_value(&ps, 0);
        if (!v) break;
        skip_ws(&ps);
        if (!many) {
            if (*ps.p) {
                ridge_json_free(v);
                fail(&ps, "unexpected text after the value");
                break;
            }
            *out = v;
            return RIDGE_OK;
        }
        *tail = v;
        tail = &v->next;
        if (!*ps.p) {
            *out = all;
            return RIDGE_OK;
        }
    }
    ridge_json_free(all);
    return ps.status ? ps.status : ridge_error(RIDGE_EFORMAT, "json: parse failed");
}

ridge_status ridge_json_parse(const char *text, ridge_json **out)
{
    return parse_text(text, 0, out);
}

ridge_status ridge_json_parse_many(const char *text, ridge_json **out)
{
    return parse_text(text, 1, out);
}

void ridge_json_free(ridge_json *v)
{
    while (v) {
        ridge_json *next = v->next;
        ridge_json_free(v->child);
        free(v->str);
        free(v->key);
        free(v);
        v = next;
    }
}

const ridge_json *ridge_json_get(const ridge_json *obj, const char *key)
{
    if (!obj || obj->type != RIDGE_JSON_OBJECT) return NULL;
    for (const ridge_json *e = obj->child; e; e = e->next)
        if (e->key && strcmp(e->key, key) == 0) return e;
    return NULL;
}

void ridge_json_write_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", (unsigned)(unsigned char)*s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

ridge_status ridge_read_file(const char *path, size_t max_bytes, char **out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return ridge_error(RIDGE_EIO, "%s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    ridge_status st = RIDGE_OK;
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        if (cap >= max_bytes) {
            st = ridge_error(RIDGE_EFORMAT, "%s: larger than %zu bytes", path, max_bytes);
            break;
        }
        cap *= 2;
        char *b = realloc(buf, cap + 1);
        if (!b) free(buf);
        buf = b;
    }
    if (!buf) st = ridge_error(RIDGE_ENOMEM, "%s: out of memory", path);
    else if (!st && ferror(f)) st = ridge_error(RIDGE_EIO, "%s: read error", path);
    fclose(f);
    if (st) {
        free(buf);
        return st;
    }
    buf[n] = 0;
    *out = buf;
    return RIDGE_OK;
}
