/* tests/test_params.c — the parameter recorder (core/params.h): defaults and given
 * values recorded with their range, choices and meaning, range messages, unknown keys
 * refused naming exactly the keys the solver reads, the effective text round-tripping
 * exactly for every registered solver (the contract of the run file's `parameters`:
 * fed back as the solver's block it gives the same parameters), every key read in
 * every mode, and the README's solver table checked against `clothbench list --params`. */
#include "cb_test.h"

#include "contact/colliders.h"
#include "experiments/harness/h5attr.h"
#include "core/params.h"
#include "core/scene.h"
#include "core/solver.h"
#include "core/world.h"
#include "experiments/harness/registry.h"

/* A small cloth over a sphere: every solver runs on it, contact code included. */
static const char *const scene_fmt =
    "name: params\nduration: 0.01\ndt: 0.005\n"
    "cloth:\n  grid: {nx: 6, ny: 6, size: [0.2, 0.2], origin: [-0.1, -0.1, 0.5]}\n"
    "  thickness: 0.002\n"
    "colliders:\n  - {type: sphere, center: [0, 0, 0.3], radius: 0.1}\n"
    "%s";

/* Create `solver` on the scene with `block` as its solvers.<solver> block (text after
 * "solvers:\n  <solver>: "; NULL: none) with the recorder on. Returns create's status;
 * *rec holds the record (also on error), err the message. */
static int create_recorded(const char *solver, const char *block, cb_params_record **rec, cb_error *err)
{
    char extra[8192] = "", text[12000];
    if (block) snprintf(extra, sizeof extra, "solvers:\n  %s: %s\n", solver, block);
    snprintf(text, sizeof text, scene_fmt, extra);
    cb_scene *sc = NULL;
    cb_world *w = NULL;
    void *self = NULL;
    *rec = NULL;
    int rc = cb_scene_load_string(text, "t.yaml", ".", NULL, 0, &sc, err);
    if (!rc) rc = cb_world_create(sc, &w, err);
    if (!rc) rc = cb_params_record_create(rec, err);
    const cb_solver_class *cls = cb_solver_find(solver);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cls);
    if (!rc) {
        cb_params p = cb_scene_params(sc, solver);
        p.rec = *rec;
        rc = cls->create(w, &p, &self, err);
        CU_ASSERT(rc ? self == NULL : self != NULL);
    }
    if (self) cls->destroy(self);
    cb_world_free(&w);
    cb_scene_free(&sc);
    return rc;
}

static cb_yaml *parse(const char *text)
{
    cb_yaml *t = NULL;
    cb_error e;
    CU_ASSERT_EQUAL_FATAL(cb_yaml_load_string(text, "text", &t, &e), 0);
    return t;
}

/* A default is recorded as used (given 0) with its range and meaning; a given value
 * as given; a choice with its choices; the text is the flow map in reading order. */
static void test_default_and_given_recorded(void)
{
    cb_yaml *t = parse("{iterations: 7, mode: fast}");
    cb_params_record *rec = NULL;
    cb_error e;
    CU_ASSERT_EQUAL_FATAL(cb_params_record_create(&rec, &e), 0);
    cb_params p = {.label = "p.yaml", .solver = "pbd", .block = t, .rec = rec};
    int it = 0, b = -1, ch = -1;
    double x = 0;
    static const char *const modes[] = {"slow", "fast", NULL};
    CU_ASSERT_EQUAL(cb_params_int(&p, "iterations", 10, 1, 100, &it, "sweeps per substep", &e), 0);
    CU_ASSERT_EQUAL(cb_params_double(&p, "omega", 1.25, 0.5, 2.0, &x, "relaxation", &e), 0);
    CU_ASSERT_EQUAL(cb_params_bool(&p, "warm", 1, &b, "warm start", &e), 0);
    CU_ASSERT_EQUAL(cb_params_choice(&p, "mode", modes, 0, &ch, "the mode", &e), 0);
    CU_ASSERT_EQUAL(it, 7);
    CU_ASSERT_EQUAL(x, 1.25);
    CU_ASSERT_EQUAL(ch, 1);
    CU_ASSERT_EQUAL_FATAL(cb_params_record_count(rec), 4);
    const cb_param_entry *ei = cb_params_record_find(rec, "iterations");
    const cb_param_entry *ed = cb_params_record_find(rec, "omega");
    const cb_param_entry *eb = cb_params_record_find(rec, "warm");
    const cb_param_entry *ec = cb_params_record_find(rec, "mode");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ei);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ed);
    CU_ASSERT_PTR_NOT_NULL_FATAL(eb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ec);
    CU_ASSERT(ei->type == CB_PARAM_INT && ei->given && ei->ivalue == 7 && ei->idef == 10 && ei->ilo == 1 &&
              ei->ihi == 100);
    CU_ASSERT_STRING_EQUAL(ei->doc, "sweeps per substep");
    CU_ASSERT(ed->type == CB_PARAM_DOUBLE && !ed->given && ed->value == 1.25 && ed->def == 1.25 && ed->lo == 0.5 &&
              ed->hi == 2.0);
    CU_ASSERT_STRING_EQUAL(ed->doc, "relaxation");
    CU_ASSERT(eb->type == CB_PARAM_BOOL && !eb->given && eb->ivalue == 1);
    CU_ASSERT(ec->type == CB_PARAM_CHOICE && ec->given && ec->ivalue == 1 && ec->idef == 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ec->choices);
    CU_ASSERT_STRING_EQUAL(ec->choices[0], "slow");
    CU_ASSERT_STRING_EQUAL(ec->choices[1], "fast");
    CU_ASSERT_PTR_NULL(ec->choices[2]);
    char *text = cb_params_record_text(rec);
    CU_ASSERT_STRING_EQUAL(text, "{iterations: 7, omega: 1.25, warm: true, mode: fast}");
    free(text);
    /* a key read twice keeps its place and its last value */
    CU_ASSERT_EQUAL(cb_params_int(&p, "iterations", 3, 1, 100, &it, "again", &e), 0);
    CU_ASSERT_EQUAL(cb_params_record_count(rec), 4);
    CU_ASSERT_STRING_EQUAL(cb_params_record_at(rec, 0)->doc, "again");
    /* no record: nothing recorded, values still read */
    cb_params q = {.label = "p.yaml", .solver = "pbd", .block = t};
    CU_ASSERT_EQUAL(cb_params_int(&q, "extra", 5, 1, 100, &it, "x", &e), 0);
    CU_ASSERT_EQUAL(it, 5);
    CU_ASSERT_PTR_NULL(cb_params_record_find(rec, "extra"));
    cb_params_record_free(&rec);
    CU_ASSERT_PTR_NULL(rec);
    cb_params_record_free(&rec); /* twice is harmless */
    cb_yaml_free(&t);
}

/* An out-of-range value is an error naming the full key, the range and the value, and
 * is not recorded. */
static void test_range_in_message(void)
{
    cb_yaml *t = parse("{iterations: 0, omega: 3.5}");
    cb_params_record *rec = NULL;
    cb_error e;
    CU_ASSERT_EQUAL_FATAL(cb_params_record_create(&rec, &e), 0);
    cb_params p = {.label = "p.yaml", .solver = "fms", .block = t, .rec = rec};
    int it = -1;
    double x = -1;
    CU_ASSERT_EQUAL(cb_params_int(&p, "iterations", 10, 1, 100, &it, "d", &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "p.yaml:1:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "solvers.fms.iterations: expected a value in [1, 100], got 0"));
    CU_ASSERT_EQUAL(cb_params_double(&p, "omega", 1, 0.5, 2, &x, "d", &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "solvers.fms.omega: expected a value in [0.5, 2], got 3.5"));
    CU_ASSERT_EQUAL(it, -1);
    CU_ASSERT_EQUAL(x, -1);
    CU_ASSERT_EQUAL(cb_params_record_count(rec), 0);
    cb_params_record_free(&rec);
    cb_yaml_free(&t);
}

/* Doubles are written so they read back to the same bits: 0.1 + 0.2, 1/3, tiny and
 * huge values, -0; and the shortest such text (0.8, not 0.80000000000000004). */
static void test_doubles_round_trip(void)
{
    const double vals[] = {0.1 + 0.2, 1.0 / 3.0, 0.8, 1e-300, 4.9406564584124654e-324, 1.7976931348623157e308,
                           -0.0, 2.5e-4, 123456789.123456789};
    cb_params_record *rec = NULL;
    cb_error e;
    CU_ASSERT_EQUAL_FATAL(cb_params_record_create(&rec, &e), 0);
    cb_params p = {.label = "p.yaml", .solver = "x", .rec = rec};
    int n = (int)(sizeof vals / sizeof vals[0]);
    for (int i = 0; i < n; i++) {
        char key[16];
        double out;
        snprintf(key, sizeof key, "k%d", i);
        CU_ASSERT_EQUAL(cb_params_double(&p, key, vals[i], -INFINITY, INFINITY, &out, "d", &e), 0);
    }
    char *text = cb_params_record_text(rec);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "k2: 0.8,"));
    cb_yaml *back = parse(text);
    for (int i = 0; i < n; i++) {
        char key[16];
        double v = NAN;
        snprintf(key, sizeof key, "k%d", i);
        CU_ASSERT_EQUAL(cb_yaml_double(cb_yaml_get(back, key), "text", key, &v, &e), 0);
        CU_ASSERT(memcmp(&v, &vals[i], sizeof v) == 0);
        if (memcmp(&v, &vals[i], sizeof v)) fprintf(stderr, "  %s: %.17g read back as %.17g\n", key, vals[i], v);
    }
    cb_yaml_free(&back);
    free(text);
    cb_params_record_free(&rec);
}

/* Every registered solver refuses an unknown key with a message that names it and, as
 * the allowed keys, exactly the keys it reads (in reading order). */
static void test_unknown_key_names_allowed(void)
{
    for (int i = 0; i < cb_solver_count(); i++) {
        const char *name = cb_solver_at(i)->name;
        cb_params_record *rec = NULL, *bad = NULL;
        cb_error e;
        CU_ASSERT_EQUAL_FATAL(create_recorded(name, NULL, &rec, &e), 0);
        CU_ASSERT(cb_params_record_count(rec) > 0);
        char want[4096];
        int len = snprintf(want, sizeof want, "unknown key 'frobnicate' in solvers.%s; allowed keys: ", name);
        for (int k = 0; k < cb_params_record_count(rec); k++)
            len += snprintf(want + len, sizeof want - (size_t)len, "%s%s", k ? ", " : "",
                            cb_params_record_at(rec, k)->key);
        CU_ASSERT_EQUAL(create_recorded(name, "{frobnicate: 1}", &bad, &e), CB_ERR_INPUT);
        if (!strstr(e.message, want)) fprintf(stderr, "  %s: %s\n  want: %s\n", name, e.message, want);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.message, want));
        CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "t.yaml:"));
        cb_params_record_free(&rec);
        cb_params_record_free(&bad);
    }
}

/* The contract of the run file's `parameters`: for every registered solver, the
 * effective text of a default create, given back as its block, is accepted, records
 * every key as given, and gives the same text. */
static void test_effective_text_round_trip(void)
{
    for (int i = 0; i < cb_solver_count(); i++) {
        const char *name = cb_solver_at(i)->name;
        cb_params_record *r1 = NULL, *r2 = NULL;
        cb_error e;
        CU_ASSERT_EQUAL_FATAL(create_recorded(name, NULL, &r1, &e), 0);
        char *t1 = cb_params_record_text(r1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t1);
        for (int k = 0; k < cb_params_record_count(r1); k++) CU_ASSERT_FALSE(cb_params_record_at(r1, k)->given);
        int rc = create_recorded(name, t1, &r2, &e);
        if (rc) fprintf(stderr, "  %s: %s\n", name, e.message);
        CU_ASSERT_EQUAL(rc, 0);
        char *t2 = cb_params_record_text(r2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t2);
        if (strcmp(t1, t2)) fprintf(stderr, "  %s:\n    %s\n    %s\n", name, t1, t2);
        CU_ASSERT_STRING_EQUAL(t1, t2);
        CU_ASSERT_EQUAL(cb_params_record_count(r2), cb_params_record_count(r1));
        for (int k = 0; k < cb_params_record_count(r2); k++) CU_ASSERT_TRUE(cb_params_record_at(r2, k)->given);
        free(t1);
        free(t2);
        cb_params_record_free(&r1);
        cb_params_record_free(&r2);
    }
}

/* Every key is read in every mode: setting any choice to any of its values, or any
 * bool to its other value, leaves the set of keys read unchanged (so the effective map
 * of one mode is accepted in every other, and `list --params` shows every key). */
static void test_every_key_in_every_mode(void)
{
    for (int i = 0; i < cb_solver_count(); i++) {
        const char *name = cb_solver_at(i)->name;
        cb_params_record *r0 = NULL;
        cb_error e;
        CU_ASSERT_EQUAL_FATAL(create_recorded(name, NULL, &r0, &e), 0);
        for (int k = 0; k < cb_params_record_count(r0); k++) {
            const cb_param_entry *en = cb_params_record_at(r0, k);
            int nval = en->type == CB_PARAM_CHOICE ? en->ihi + 1 : en->type == CB_PARAM_BOOL ? 2 : 0;
            for (int v = 0; v < nval; v++) {
                if (v == en->idef) continue;
                char block[256];
                snprintf(block, sizeof block, "{%s: %s}", en->key,
                         en->type == CB_PARAM_CHOICE ? en->choices[v] : v ? "true" : "false");
                cb_params_record *r = NULL;
                int rc = create_recorded(name, block, &r, &e);
                if (rc) fprintf(stderr, "  %s %s: %s\n", name, block, e.message);
                CU_ASSERT_EQUAL(rc, 0);
                int same = cb_params_record_count(r) == cb_params_record_count(r0);
                for (int j = 0; j < cb_params_record_count(r0) && same; j++)
                    same = cb_params_record_find(r, cb_params_record_at(r0, j)->key) != NULL;
                if (!same) fprintf(stderr, "  %s %s: the keys read change\n", name, block);
                CU_ASSERT(same);
                cb_params_record_free(&r);
            }
        }
        cb_params_record_free(&r0);
    }
}

/* ------------------------------------------------------------ README vs list --params */

static char listing[1 << 17];

/* The keys `clothbench list --params` gives for `solver` (and their choices), as
 * space-separated words with spaces around: " scheme damping ... ". */
static void listed(const char *solver, char *keys, size_t kcap, char *choices, size_t ccap)
{
    keys[0] = choices[0] = '\0';
    char head[128];
    snprintf(head, sizeof head, "\n%.64s:\n", solver);
    const char *p = strstr(listing, head);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    p += strlen(head);
    snprintf(keys, kcap, " ");
    snprintf(choices, ccap, " ");
    while (p[0] == ' ' && p[1] == ' ') {
        char key[64], type[16], def[64], range[256];
        CU_ASSERT_EQUAL_FATAL(sscanf(p, "%63s %15s %63s %255s", key, type, def, range), 4);
        snprintf(keys + strlen(keys), kcap - strlen(keys), "%s ", key);
        if (!strcmp(type, "choice"))
            for (char *c = strtok(range, "|"); c; c = strtok(NULL, "|"))
                snprintf(choices + strlen(choices), ccap - strlen(choices), "%s ", c);
        p = strchr(p, '\n');
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        p++;
    }
}

static int word_in(const char *words, const char *w)
{
    char pat[160];
    snprintf(pat, sizeof pat, " %.128s ", w);
    return strstr(words, pat) != NULL;
}

/* Every key `list --params` gives for a solver is in backticks in its README row, and
 * every key-looking word in backticks in the row's parameters column is one of its
 * keys or choice values. */
static void test_readme_table_matches_list(void)
{
    CU_ASSERT_EQUAL_FATAL(cb_test_clothbench(listing, sizeof listing, 1, "list --params"), 0);
    FILE *f = fopen("README.md", "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static char line[16384];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        /* | `solver` | method | parameters | */
        if (strncmp(line, "| `", 3)) continue;
        char solver[64];
        if (sscanf(line + 3, "%63[a-z_]", solver) != 1 || !cb_solver_find(solver)) continue;
        char *c1 = strchr(line + 1, '|'), *c2 = c1 ? strchr(c1 + 1, '|') : NULL;
        CU_ASSERT_PTR_NOT_NULL_FATAL(c2);
        char *params = c2 + 1;
        rows++;
        static char keys[8192], choices[8192];
        listed(solver, keys, sizeof keys, choices, sizeof choices);
        /* every listed key appears as `key` */
        char *save = NULL, kcopy[8192];
        snprintf(kcopy, sizeof kcopy, "%s", keys);
        for (char *k = strtok_r(kcopy, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
            char pat[80];
            snprintf(pat, sizeof pat, "`%s`", k);
            if (!strstr(params, pat)) fprintf(stderr, "  README row %s: no %s\n", solver, pat);
            CU_ASSERT_PTR_NOT_NULL(strstr(params, pat));
        }
        /* every `word` of the column is a key or a choice */
        for (char *q = strchr(params, '`'); q; q = strchr(q, '`')) {
            char *end = strchr(q + 1, '`');
            CU_ASSERT_PTR_NOT_NULL_FATAL(end);
            char word[128];
            size_t n = (size_t)(end - q - 1);
            snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), q + 1);
            int keylike = word[0] != '\0';
            for (char *c = word; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) keylike = 0;
            if (keylike) {
                int ok = word_in(keys, word) || word_in(choices, word);
                if (!ok) fprintf(stderr, "  README row %s: `%s` is no key or choice of it\n", solver, word);
                CU_ASSERT(ok);
            }
            q = end + 1;
        }
    }
    fclose(f);
    CU_ASSERT_EQUAL(rows, cb_solver_count());
}

/* The bytes of dataset `path` in run file `file`, malloc'd (*n bytes); NULL if absent. */
static unsigned char *dataset_bytes(const char *file, const char *path, size_t *n)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return NULL;
    unsigned char *buf = NULL;
    hid_t d = H5Dopen(f, path, H5P_DEFAULT);
    if (d >= 0) {
        hid_t sp = H5Dget_space(d);
        hssize_t count = H5Sget_simple_extent_npoints(sp);
        *n = (size_t)count * sizeof(double);
        buf = calloc(*n + 1, 1);
        if (buf && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
            free(buf);
            buf = NULL;
        }
        H5Sclose(sp);
        H5Dclose(d);
    }
    H5Fclose(f);
    return buf;
}

static char *root_attr(const char *file, const char *name)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return NULL;
    char *v = cb_h5_string_attr(f, name);
    H5Fclose(f);
    return v;
}

/* The rerun contract end to end, for every registered solver: a run of drape_sphere
 * (with its explicit block {damping: 0.5}) stores the effective map as `parameters`
 * and the block as `parameters_given`; replacing solvers.<name> by that map (--set)
 * runs bitwise the same (frames and energies) and stores the same map. */
static void test_run_file_parameters_rerun(void)
{
    static char out[65536];
    const char *common = "--set cloth.grid.nx=10 --set cloth.grid.ny=10 --set duration=0.02 --set frame_rate=200 -q";
    for (int i = 0; i < cb_solver_count(); i++) {
        const char *name = cb_solver_at(i)->name;
        char f1[600], f2[600];
        snprintf(f1, sizeof f1, "%s", cb_test_tmp_path("a.h5"));
        snprintf(f2, sizeof f2, "%s", cb_test_tmp_path("b.h5"));
        CU_ASSERT_EQUAL_FATAL(cb_test_clothbench(out, sizeof out, 1, "run data/scenes/drape_sphere.yaml --solver %s "
                                                 "-o %s %s", name, f1, common), 0);
        char *p1 = root_attr(f1, "parameters"), *g1 = root_attr(f1, "parameters_given");
        CU_ASSERT_PTR_NOT_NULL_FATAL(p1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g1);
        CU_ASSERT_STRING_EQUAL(g1, strcmp(name, "explicit") ? "{}" : "{damping: 0.5}");
        CU_ASSERT(p1[0] == '{' && strlen(p1) > 2);
        if (!strcmp(name, "explicit")) CU_ASSERT_PTR_NOT_NULL(strstr(p1, "damping: 0.5,"));
        CU_ASSERT_EQUAL_FATAL(cb_test_clothbench(out, sizeof out, 1, "run data/scenes/drape_sphere.yaml --solver %s "
                                                 "-o %s %s --set 'solvers.%s=%s'", name, f2, common, name, p1), 0);
        char *p2 = root_attr(f2, "parameters"), *g2 = root_attr(f2, "parameters_given");
        CU_ASSERT_PTR_NOT_NULL_FATAL(p2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g2);
        CU_ASSERT_STRING_EQUAL(p1, p2);
        CU_ASSERT_STRING_EQUAL(g2, p1);
        const char *sets[] = {"/frames/positions", "/series/total_energy", "/series/linear_momentum"};
        for (int k = 0; k < 3; k++) {
            size_t n1 = 0, n2 = 0;
            unsigned char *b1 = dataset_bytes(f1, sets[k], &n1), *b2 = dataset_bytes(f2, sets[k], &n2);
            CU_ASSERT_PTR_NOT_NULL(b1);
            CU_ASSERT_PTR_NOT_NULL(b2);
            CU_ASSERT(n1 > 0 && n1 == n2 && b1 && b2 && memcmp(b1, b2, n1) == 0);
            if (!(n1 == n2 && b1 && b2 && memcmp(b1, b2, n1) == 0)) fprintf(stderr, "  %s: %s differs\n", name, sets[k]);
            free(b1);
            free(b2);
        }
        free(p1);
        free(g1);
        free(p2);
        free(g2);
    }
}

/* The keys of a scene's or an experiment's maps (cb_keys): the allowed keys are those
 * asked of that map, in asking order; a nested map has its own; an absent map passes. */
static void test_keys_asked_are_allowed(void)
{
    cb_yaml *t = parse("a: 1\nb: {x: 2, y: 3}\nc: 4\n");
    cb_keys *k = NULL;
    cb_error e;
    CU_ASSERT_EQUAL_FATAL(cb_keys_create(&k, &e), 0);
    CU_ASSERT_PTR_NOT_NULL(cb_keys_ask(k, t, "b"));
    CU_ASSERT_PTR_NOT_NULL(cb_keys_ask(k, t, "a"));
    CU_ASSERT_PTR_NULL(cb_keys_ask(k, t, "z")); /* asked, absent: still allowed */
    const cb_yaml *b = cb_keys_ask(k, t, "b"); /* asked twice: listed once */
    CU_ASSERT_PTR_NOT_NULL(cb_keys_ask(k, b, "x"));
    CU_ASSERT_EQUAL(cb_keys_check(k, t, "s.yaml", "the test", &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "s.yaml:3:1: unknown key 'c' in the test; allowed keys: b, a, z"));
    CU_ASSERT_EQUAL(cb_keys_check(k, b, "s.yaml", "b", &e), CB_ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "unknown key 'y' in b; allowed keys: x"));
    cb_keys_ask(k, b, "y");
    CU_ASSERT_EQUAL(cb_keys_check(k, b, "s.yaml", "b", &e), 0);
    CU_ASSERT_EQUAL(cb_keys_check(k, NULL, "s.yaml", "none", &e), 0);
    cb_keys_free(&k);
    CU_ASSERT_PTR_NULL(k);
    cb_yaml_free(&t);
}

CB_TEST_MAIN("params",
             CB_TEST(test_default_and_given_recorded),
             CB_TEST(test_range_in_message),
             CB_TEST(test_doubles_round_trip),
             CB_TEST(test_unknown_key_names_allowed),
             CB_TEST(test_effective_text_round_trip),
             CB_TEST(test_every_key_in_every_mode),
             CB_TEST(test_readme_table_matches_list),
             CB_TEST(test_run_file_parameters_rerun),
             CB_TEST(test_keys_asked_are_allowed))
