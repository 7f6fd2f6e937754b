/* core/files.h — small file-system and text helpers shared by the harness and the
 * program: mkdir -p, and one CSV quoting rule (RFC 4180) for every CSV we write. */
#ifndef CB_FILES_H
#define CB_FILES_H

#include <stdio.h>

#include "core/error.h"

/* mkdir -p dir (every missing folder of the path; existing ones are fine). */
int cb_mkdir_p(const char *dir, cb_error *err);
/* mkdir -p of the folder that will hold `path` (nothing when path has no folder). */
int cb_mkdir_parent(const char *path, cb_error *err);
/* Writes s (NULL: empty) as one CSV field: as is, or in double quotes with inner
 * quotes doubled when it holds a comma, a quote, CR or LF. */
void cb_csv_field(FILE *f, const char *s);

#endif
