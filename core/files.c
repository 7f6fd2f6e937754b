/* core/files.c — mkdir -p and CSV quoting (files.h). */
#include "core/files.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

int cb_mkdir_p(const char *dir, cb_error *err)
{
    char buf[4096];
    if (!dir || !dir[0]) return CB_FAIL(err, CB_ERR_INPUT, "cb_mkdir_p: no folder given");
    if (strlen(dir) >= sizeof buf) return CB_FAIL(err, CB_ERR_INPUT, "%s: path too long", dir);
    strcpy(buf, dir);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) && errno != EEXIST)
            return CB_FAIL(err, CB_ERR_IO, "%s: cannot create folder: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0777) && errno != EEXIST)
        return CB_FAIL(err, CB_ERR_IO, "%s: cannot create folder: %s", buf, strerror(errno));
    return CB_OK;
}

int cb_mkdir_parent(const char *path, cb_error *err)
{
    char buf[4096];
    if (!path) return CB_FAIL(err, CB_ERR_INPUT, "cb_mkdir_parent: no path given");
    if (strlen(path) >= sizeof buf) return CB_FAIL(err, CB_ERR_INPUT, "%s: path too long", path);
    strcpy(buf, path);
    char *slash = strrchr(buf, '/');
    if (!slash || slash == buf) return CB_OK;
    *slash = '\0';
    return cb_mkdir_p(buf, err);
}

void cb_csv_field(FILE *f, const char *s)
{
    if (!s) s = "";
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}
