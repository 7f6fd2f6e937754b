/* tests/fuzz/targets.h — the fuzz targets, shared by the libFuzzer harnesses
 * (tests/fuzz/fuzz_*.c, clang, meson -Dfuzz=true) and the replay of the kept inputs in
 * the ordinary test suite (tests/test_fuzz_regress.c). Each takes arbitrary bytes and
 * returns 0; a bug is a crash, a sanitizer report, a leak or an abort() where the
 * target checks a property (the YAML round trip). */
#ifndef CB_FUZZ_TARGETS_H
#define CB_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

/* A scene: the bytes up to a line "#--set" are the YAML text, each later line one
 * --set override; parsed with cb_scene_parse_string. Then the YAML tree's round trip:
 * emit -> parse -> emit gives the same text (abort() otherwise). */
int cb_fuzz_scene(const uint8_t *data, size_t size);
/* An OBJ file (written to a temporary file, read with cb_mesh_read_obj). */
int cb_fuzz_obj(const uint8_t *data, size_t size);
/* A TetGen pair: the bytes up to a line "#--ele" are the .node file, the rest the
 * .ele file (cb_tetmesh_read_tetgen). */
int cb_fuzz_tetgen(const uint8_t *data, size_t size);

#endif
