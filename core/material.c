/* core/material.c — measured fabrics and their mapping to the shared model (material.h). */
#include "core/material.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/yamltree.h"

#ifndef CB_DATA_DIR
#define CB_DATA_DIR "data"
#endif

const char *cb_material_dir(char *buf, size_t size)
{
    const char *env = getenv("CLOTHBENCH_DATA");
    snprintf(buf, size, "%s/materials", env && env[0] ? env : CB_DATA_DIR);
    return buf;
}

double cb_material_bending_stiffness(double E, double t, double nu)
{
    return E * t * t * t / (12.0 * (1.0 - nu * nu));
}

double cb_material_k_bend(double B) { return B / CB_HINGE_STIFFNESS; }

double cb_material_k_stretch(double E, double t) { return 0.75 * E * t; }

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "cotton, denim, ..." : the stems of dir's .yaml files, sorted, into buf. */
static void known_names(const char *dir, char *buf, size_t size)
{
    char *names[256];
    int n = 0;
    buf[0] = '\0';
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(buf, size, "none: cannot read the folder %s", dir);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        size_t len = strlen(e->d_name);
        if (len > 5 && e->d_name[0] != '.' && strcmp(e->d_name + len - 5, ".yaml") == 0) {
            names[n] = cb_strdup(e->d_name);
            if (!names[n]) break;
            names[n][len - 5] = '\0';
            n++;
        }
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", names[i]);
        if (w > 0 && (size_t)w < size - used) used += (size_t)w;
        free(names[i]);
    }
    if (n == 0) snprintf(buf, size, "none in %s", dir);
}

static int valid_name(const char *s)
{
    if (!s[0] || strlen(s) >= sizeof ((cb_material *)0)->name) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-'))
            return 0;
    return 1;
}

/* An optional number > 0 (< hi) at map[key]; NaN when absent. */
static int number(const cb_yaml *map, const char *path, const char *key, double hi, double *out,
                  cb_error *err)
{
    char w[600];
    const cb_yaml *n = cb_yaml_get(map, key);
    *out = NAN;
    if (!n) return 0;
    int rc = cb_yaml_double(n, path, key, out, err);
    if (rc) return rc;
    if (!(*out > 0.0 && *out < hi))
        return CB_FAIL(err, CB_ERR_INPUT, "%s: %s: expected a value in (0, %g), got %s",
                       cb_yaml_where(n, path, w, sizeof w), key, hi, n->scalar);
    return 0;
}

int cb_material_load(const char *dir, const char *name, cb_material *out, char *path, size_t size,
                     cb_error *err)
{
    static const char *const keys[] = { "source", "density", "areal_density", "thickness",
                                        "youngs_modulus", "poisson_ratio", NULL };
    char known[1024], w[600];
    if (!dir || !name || !out || !path || size == 0)
        return CB_FAIL(err, CB_ERR_INPUT, "cb_material_load: NULL argument");
    int n = snprintf(path, size, "%s/%s.yaml", dir, name);
    FILE *f = valid_name(name) && n > 0 && (size_t)n < size ? fopen(path, "r") : NULL;
    if (!f) {
        known_names(dir, known, sizeof known);
        return CB_FAIL(err, CB_ERR_INPUT, "unknown material '%s' (known: %s; files %s/NAME.yaml)", name,
                       known, dir);
    }
    fclose(f);
    cb_yaml *root = NULL;
    int rc = cb_yaml_load_file(path, &root, err);
    if (rc) return rc;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    double rho = NAN;
    const cb_yaml *src = cb_yaml_get(root, "source");
    if (root->kind != CB_YAML_MAP)
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: expected a map of material keys", path);
    else if ((rc = cb_yaml_check_keys(root, path, "the material", keys, err)))
        ;
    else if (!src || src->kind != CB_YAML_SCALAR || !src->scalar[0])
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: missing 'source' (the publication the values come from)", path);
    else if ((rc = number(root, path, "density", 1e5, &rho, err)) ||
             (rc = number(root, path, "areal_density", 1e3, &out->areal_density, err)) ||
             (rc = number(root, path, "thickness", 1.0, &out->thickness, err)) ||
             (rc = number(root, path, "youngs_modulus", 1e12, &out->youngs_modulus, err)) ||
             (rc = number(root, path, "poisson_ratio", 0.5, &out->poisson_ratio, err)))
        ;
    else if (isnan(rho) == isnan(out->areal_density))
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: give exactly one of density (kg/m^3, with thickness) and "
                     "areal_density (kg/m^2)", path);
    else if (!isnan(rho) && isnan(out->thickness))
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: density (kg/m^3) needs thickness", cb_yaml_where(cb_yaml_get(root, "density"), path, w, sizeof w));
    else if (isnan(out->youngs_modulus) != isnan(out->poisson_ratio) ||
             (!isnan(out->youngs_modulus) && isnan(out->thickness)))
        rc = CB_FAIL(err, CB_ERR_INPUT, "%s: youngs_modulus, poisson_ratio and thickness come together "
                     "(or give none of the first two)", path);
    cb_yaml_free(&root);
    if (rc) return rc;
    if (!isnan(rho)) out->areal_density = rho * out->thickness;
    out->bending_stiffness = out->k_stretch = out->k_bend = NAN;
    if (!isnan(out->youngs_modulus)) {
        out->bending_stiffness = cb_material_bending_stiffness(out->youngs_modulus, out->thickness,
                                                               out->poisson_ratio);
        out->k_bend = cb_material_k_bend(out->bending_stiffness);
        out->k_stretch = cb_material_k_stretch(out->youngs_modulus, out->thickness);
    }
    return 0;
}
