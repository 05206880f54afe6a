/* A small JSON reader: parses a document into a tree of values. Enough for ridge's own files
 * (the roofline profile) and for reading `ridge bench --json` output; not a general library
 * (numbers are doubles, \u escapes outside ASCII become '?'). Internal to ridge. */
#ifndef RIDGE_PERF_JSON_H
#define RIDGE_PERF_JSON_H

#include <stdio.h>

#include "ridge/core.h"

typedef enum ridge_json_type {
    RIDGE_JSON_NULL,
    RIDGE_JSON_BOOL,
    RIDGE_JSON_NUMBER,
    RIDGE_JSON_STRING,
    RIDGE_JSON_ARRAY,
    RIDGE_JSON_OBJECT,
} ridge_json_type;

typedef struct ridge_json {
    ridge_json_type type;
    double num;               /* NUMBER; BOOL as 0/1 */
    char *str;                /* STRING, unescaped and NUL-terminated */
    char *key;                /* the member name when the parent is an OBJECT, else NULL */
    struct ridge_json *child; /* ARRAY / OBJECT: the first element, in document order */
    struct ridge_json *next;  /* the next sibling */
} ridge_json;

/* Parses one JSON value (surrounding whitespace allowed, nothing else). On failure returns
 * RIDGE_EFORMAT ("json: line L, column C: expected ...") or RIDGE_ENOMEM and sets *out NULL.
 * Free the tree with ridge_json_free. */
ridge_status ridge_json_parse(const char *text, ridge_json **out);
/* Parses a sequence of one or more values (as `ridge bench all --json` prints them, one after
 * another) into an ARRAY holding them in order. */
ridge_status ridge_json_parse_many(const char *text, ridge_json **out);
void ridge_json_free(ridge_json *v); /* NULL is a no-op */

/* The member `key` of an object (the first if repeated), or NULL. */
const ridge_json *ridge_json_get(const ridge_json *obj, const char *key);

/* Writes s to f as a JSON string: quoted, with '"', '\\' and control bytes escaped. */
void ridge_json_write_string(FILE *f, const char *s);

/* Reads a whole file into a NUL-terminated malloc'd buffer (free with free). RIDGE_EIO with
 * the path and errno's reason; RIDGE_EFORMAT if larger than max_bytes. */
ridge_status ridge_read_file(const char *path, size_t max_bytes, char **out);

#endif /* RIDGE_PERF_JSON_H */
