/* tests/test_layers.c — the layering of ARCHITECTURE.md "Layers", checked on the
 * sources: core/ includes only core/; contact/ core/ and contact/; solvers/ those and
 * solvers/; experiments/harness/ those and itself. Calls across layers are checked by
 * the layer_check_* links in meson.build; this suite checks the #include lines, so a
 * wrong-way include fails here even where it calls nothing. It also checks that the
 * checker itself flags a wrong-way include (a rule that cannot fail checks nothing). */
#include "cb_test.h"

#include <dirent.h>
#include <string.h>

typedef struct {
    const char *folder;          /* source folder, relative to the project root */
    const char *const *allowed;  /* include prefixes it may use, NULL-terminated */
} layer;

static const char *const core_ok[] = { "core/", NULL };
static const char *const contact_ok[] = { "core/", "contact/", NULL };
static const char *const solvers_ok[] = { "core/", "contact/", "solvers/", NULL };
static const char *const harness_ok[] = { "core/", "contact/", "solvers/", "experiments/harness/", NULL };

static const layer layers[] = {
    { "core", core_ok },
    { "contact", contact_ok },
    { "solvers", solvers_ok },
    { "solvers/acm", solvers_ok },
    { "experiments/harness", harness_ok },
};

/* 1 when a quoted include of `target` (e.g. "contact/bvh.h") is allowed by `allowed`.
 * Includes without a folder (generated headers such as cb_build_info.h) are allowed. */
static int include_allowed(const char *target, const char *const *allowed)
{
    if (!strchr(target, '/')) return 1;
    for (int i = 0; allowed[i]; i++)
        if (!strncmp(target, allowed[i], strlen(allowed[i]))) return 1;
    return 0;
}

/* Counts the wrong-way includes of one file, printing each as FILE:LINE. */
static int check_file(const char *path, const char *const *allowed)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("\n  cannot open %s\n", path);
        return 1;
    }
    char line[1024];
    int n = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (strncmp(p, "#include \"", 10)) continue;
        char target[512];
        const char *a = p + 10, *b = strchr(a, '"');
        if (!b || (size_t)(b - a) >= sizeof target) continue;
        memcpy(target, a, (size_t)(b - a));
        target[b - a] = '\0';
        if (!include_allowed(target, allowed)) {
            printf("\n  %s:%d: includes \"%s\" from a layer above", path, lineno, target);
            n++;
        }
    }
    fclose(f);
    return n;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* Checks every .c and .h file of one folder (not its subfolders); *files counts them. */
static int check_folder(const layer *L, int *files)
{
    DIR *d = opendir(L->folder);
    if (!d) {
        printf("\n  cannot open folder %s (run from the project root)\n", L->folder);
        return 1;
    }
    struct dirent *e;
    int bad = 0;
    while ((e = readdir(d))) {
        if (!ends_with(e->d_name, ".c") && !ends_with(e->d_name, ".h")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", L->folder, e->d_name);
        bad += check_file(path, L->allowed);
        (*files)++;
    }
    closedir(d);
    return bad;
}

static void test_no_wrong_way_include(void)
{
    int files = 0, bad = 0;
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) bad += check_folder(&layers[i], &files);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(files > 80); /* the folders were found and read */
}

static void test_checker_flags_wrong_way(void)
{
    /* the checker itself: a core file including contact/ or the harness is flagged */
    const char *p = cb_test_write_tmp("layers_bad.c", "#include \"core/vec3.h\"\n"
                                      "  #include \"contact/bvh.h\"\n"
                                      "#include \"experiments/harness/run.h\"\n"
                                      "#include <stdio.h>\n#include \"cb_build_info.h\"\n");
    CU_ASSERT_EQUAL(check_file(p, core_ok), 2);
    CU_ASSERT_EQUAL(check_file(p, contact_ok), 1);
    CU_ASSERT_EQUAL(check_file(p, harness_ok), 0);
    printf("\n  (the two lines above were expected)\n");
}

CB_TEST_MAIN("layers",
             CB_TEST(test_no_wrong_way_include),
             CB_TEST(test_checker_flags_wrong_way))
