/* experiments/harness/h5attr.h — reading string attributes of HDF5 objects (the run file's solver,
 * status, message, scene text...), and integer and floating ones, for `clothbench info`, the
 * sweep, rerun and the tests.
 * Variable- and fixed-length strings of either character set are read. */
#ifndef CB_H5ATTR_H
#define CB_H5ATTR_H

#include <hdf5.h>
#include <stddef.h>

/* The string attribute `name` of loc (a file, group or dataset), malloc'd (the caller
 * frees it); NULL when loc has no such attribute or it cannot be read as a string. */
char *cb_h5_string_attr(hid_t loc, const char *name);

/* The same into buf[n] (n >= 1; cut to n - 1 bytes, always terminated, "" on
 * failure). Returns 0, or CB_ERR_IO when the attribute is missing or unreadable. */
int cb_h5_read_string_attr(hid_t loc, const char *name, char *buf, size_t n);

/* The integer attribute `name` into *out. Returns 0, or CB_ERR_IO when it is missing
 * or not an integer. */
int cb_h5_read_int_attr(hid_t loc, const char *name, int *out);

/* The floating-point attribute `name` into *out. Returns 0, or CB_ERR_IO when it is
 * missing or not a floating-point number. */
int cb_h5_read_double_attr(hid_t loc, const char *name, double *out);

#endif
