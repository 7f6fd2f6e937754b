/* experiments/harness/h5attr.c — reading string attributes of HDF5 objects (h5attr.h). */
#include "experiments/harness/h5attr.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"

char *cb_h5_string_attr(hid_t loc, const char *name)
{
    if (!name || H5Aexists(loc, name) <= 0) return NULL;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return NULL;
    hid_t t = H5Aget_type(a);
    char *out = NULL;
    if (H5Tis_variable_str(t) > 0) {
        char *s = NULL;
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        H5Tset_cset(mt, H5Tget_cset(t));
        if (H5Aread(a, mt, &s) >= 0 && s) out = cb_strdup(s);
        if (s) H5free_memory(s);
        H5Tclose(mt);
    } else {
        size_t sz = H5Tget_size(t);
        char *buf = cb_calloc(sz + 1, 1);
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, sz);
        H5Tset_cset(mt, H5Tget_cset(t));
        if (buf && H5Aread(a, mt, buf) >= 0) out = buf;
        else free(buf);
        H5Tclose(mt);
    }
    H5Tclose(t);
    H5Aclose(a);
    return out;
}

int cb_h5_read_string_attr(hid_t loc, const char *name, char *buf, size_t n)
{
    CB_ASSERT(buf && n > 0);
    buf[0] = '\0';
    char *s = cb_h5_string_attr(loc, name);
    if (!s) return CB_ERR_IO;
    snprintf(buf, n, "%s", s);
    free(s);
    return CB_OK;
}

/* Attribute `name` of class cls read as mem into out. */
static int read_number_attr(hid_t loc, const char *name, H5T_class_t cls, hid_t mem, void *out)
{
    if (H5Aexists(loc, name) <= 0) return CB_ERR_IO;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return CB_ERR_IO;
    hid_t t = H5Aget_type(a);
    int ok = t >= 0 && H5Tget_class(t) == cls && H5Aread(a, mem, out) >= 0;
    if (t >= 0) H5Tclose(t);
    H5Aclose(a);
    return ok ? CB_OK : CB_ERR_IO;
}

int cb_h5_read_int_attr(hid_t loc, const char *name, int *out)
{
    CB_ASSERT(out);
    return read_number_attr(loc, name, H5T_INTEGER, H5T_NATIVE_INT, out);
}

int cb_h5_read_double_attr(hid_t loc, const char *name, double *out)
{
    CB_ASSERT(out);
    return read_number_attr(loc, name, H5T_FLOAT, H5T_NATIVE_DOUBLE, out);
}
