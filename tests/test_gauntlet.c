/* tests/test_gauntlet.c — what the contact gauntlet's scenes need (issue 33): pins that
 * follow a scripted rigid motion (a rotation about an axis through a point), checked
 * against the analytic motion; analytic colliders that spin in place and drive cloth by
 * friction, with every method; a cloth of several pieces as one mesh. */
#include "cb_test.h"

#include <dirent.h>

#include "cb_sim.h"
#include "core/vec3.h"

/* A 1 x 0.5 sheet in the plane z = 1; its left and right columns twisted in opposite
 * senses about the x axis through (0, 0.25, 1), the right one also carried along x. */
static const char *twist =
    "name: twist\nduration: 0.01\ndt: 0.001\ngravity: [0, 0, 0]\n"
    "cloth:\n  grid: {nx: 9, ny: 5, size: [1, 0.5], origin: [0, 0, 1]}\n"
    "  pins:\n"
    "    - {select: left, angular_velocity: [3, 0, 0], pivot: [0, 0.25, 1]}\n"
    "    - {select: right, angular_velocity: [-3, 0, 0], pivot: [1, 0.25, 1], velocity: [0.1, 0, 0]}\n";

/* After a period 2 pi / omega every pin is back at its start (plus the translation);
 * after half a period it is mirrored through the axis; its velocity is the derivative
 * of its path (central differences) and the initial state has it. */
static void test_rotating_pins_follow_the_rotation(void)
{
    cb_sim s;
    CU_ASSERT_FATAL(cb_sim_world(&s, NULL, twist, NULL, NULL, 0) == 0);
    cb_world *w = s.w;
    CU_ASSERT_EQUAL(w->npinned, 10);
    double T = 2.0 * M_PI / 3.0;
    int checked = 0;
    for (int i = 0; i < w->nv; i++) {
        if (!w->pinned[i]) continue;
        const double *x0 = w->pin_origin[i], *v = w->pin_velocity[i];
        double p[3], q[3], axis[3] = {x0[0], 0.25, 1.0}, want[3], dv[3], vel[3], a[3], b[3];
        cb_world_pin_target(w, i, T, p);
        for (int k = 0; k < 3; k++) want[k] = x0[k] + v[k] * T;
        CU_ASSERT(cb_v3_dist(p, want) < 1e-12);
        cb_world_pin_target(w, i, 0.5 * T, q);
        for (int k = 0; k < 3; k++) want[k] = 2.0 * axis[k] - x0[k];
        want[0] = x0[0] + v[0] * 0.5 * T;
        CU_ASSERT(cb_v3_dist(q, want) < 1e-12);
        double t = 0.3, h = 1e-6;
        cb_world_pin_target(w, i, t + h, a);
        cb_world_pin_target(w, i, t - h, b);
        for (int k = 0; k < 3; k++) dv[k] = (a[k] - b[k]) / (2 * h);
        cb_world_pin_velocity(w, i, t, vel);
        CU_ASSERT(cb_v3_dist(vel, dv) < 1e-7);
        /* the initial state: at the origin, moving with omega x r */
        CU_ASSERT(cb_v3_dist(w->state.x[i], x0) == 0.0);
        double r[3], wr[3];
        cb_v3_sub(r, x0, axis);
        cb_v3_cross(wr, w->pin_omega[i], r);
        cb_v3_add(wr, wr, v);
        CU_ASSERT(cb_v3_dist(w->state.v[i], wr) < 1e-15);
        checked++;
    }
    CU_ASSERT_EQUAL(checked, 10);
    cb_sim_close(&s);
}

/* The solvers put pinned vertices on their rotating targets: after a run of steps with
 * each method, every pin is where the analytic motion says. */
/* Open `scene` with `method` and make n steps: 0, or -1 with the message printed. */
static int run_steps(cb_sim *s, const char *method, const char *scene, int n)
{
    if (cb_sim_open(s, method, NULL, scene, NULL, NULL, 0)) return -1;
    for (int k = 0; k < n; k++)
        if (cb_sim_step(s)) {
            fprintf(stderr, "  %s: step %d: %s\n", method, k + 1, s->e.message);
            return -1;
        }
    return 0;
}

static void test_solvers_follow_rotating_pins(void)
{
    for (int m = 0; m < cb_solver_count(); m++) {
        const char *name = cb_solver_at(m)->name;
        cb_sim s;
        int bad = run_steps(&s, name, twist, 10) ? -1 : 0;
        for (int i = 0; !bad && i < s.w->nv; i++) {
            if (!s.w->pinned[i]) continue;
            double p[3], v[3];
            cb_world_pin_target(s.w, i, s.w->state.t, p);
            cb_world_pin_velocity(s.w, i, s.w->state.t, v);
            bad += cb_v3_dist(p, s.w->state.x[i]) > 1e-12 || cb_v3_dist(v, s.w->state.v[i]) > 1e-9;
        }
        if (bad > 0) fprintf(stderr, "  %s: %d pins off their rotating targets\n", name, bad);
        CU_ASSERT_EQUAL(bad, 0);
        cb_sim_close(&s);
    }
}

/* A 0.4 m sheet (no vertex on the axis) dropped onto a sphere (friction 0.5) that spins
 * about the vertical at omega, for 0.2 s: friction at the contacts must drag it round,
 * so its angular momentum about the vertical axis takes the sign of omega and a part of
 * what co-rotation would give (I omega); a method that used the collider's translation
 * only, ignoring the spin, leaves it as without spin, at rest by symmetry (checked with
 * omega = 0). */
static double spin_momentum(const char *method, double omega, double *corot)
{
    char scene[1024];
    snprintf(scene, sizeof scene,
             "name: spin\nduration: 0.1\ndt: 0.002\ngravity: [0, 0, -9.81]\n"
             "cloth:\n  grid: {nx: 10, ny: 10, size: [0.4, 0.4], origin: [-0.2, -0.2, 0.302]}\n"
             "  density: 0.1\n  stretch: 500\n  bend: 1.0e-4\n  thickness: 0.002\n"
             "colliders:\n  - {type: sphere, center: [0, 0, 0], radius: 0.3, friction: 0.5,"
             " angular_velocity: [0, 0, %.17g]}\n", omega);
    cb_sim s;
    if (run_steps(&s, method, scene, 100)) {
        cb_sim_close(&s);
        return NAN;
    }
    double L = 0, I = 0;
    for (int i = 0; i < s.w->nv; i++) {
        const double *x = s.w->state.x[i], *v = s.w->state.v[i];
        L += s.w->mass[i] * (x[0] * v[1] - x[1] * v[0]);
        I += s.w->mass[i] * (x[0] * x[0] + x[1] * x[1]);
    }
    *corot = I * omega;
    cb_sim_close(&s);
    return L;
}

static void test_spinning_sphere_drags_the_sheet(void)
{
    for (int m = 0; m < cb_solver_count(); m++) {
        const char *name = cb_solver_at(m)->name;
        double c0, cp, cn;
        double L0 = spin_momentum(name, 0.0, &c0);
        double Lp = spin_momentum(name, 5.0, &cp), Ln = spin_momentum(name, -5.0, &cn);
        fprintf(stderr, "  %-8s L_z: omega 0: %.6g, +5: %.6g, -5: %.6g (co-rotation %.3g)\n", name, L0, Lp,
                Ln, cp);
        /* without spin, symmetry: no momentum (round-off, and the Gauss-Seidel order of
         * pbd, xpbd and acm's event order, below 0.2% of co-rotation) */
        CU_ASSERT(fabs(L0) < 2e-3 * cp);
        /* with spin: dragged round in its sense. The weakest is pbd (1% of co-rotation:
         * its stiff sheet touches the sphere near the axis only); explicit takes 60% */
        CU_ASSERT(Lp - L0 > 5e-3 * cp);
        CU_ASSERT(Ln - L0 < 5e-3 * cn);
        if (!strcmp(name, "explicit")) CU_ASSERT(Lp > 0.3 * cp && Ln < 0.3 * cn);
    }
}

/* A spin that would turn the shape is refused, naming the place and the way out. */
static void test_spin_that_turns_the_shape_is_refused(void)
{
    const char *bad[] = {
        "{type: box, center: [0, 0, 0], size: [1, 1, 1], angular_velocity: [0, 0, 1]}",
        "{type: plane, point: [0, 0, 0], normal: [0, 0, 1], angular_velocity: [1, 0, 0]}",
        "{type: capsule, p0: [0, 0, 0], p1: [1, 0, 0], radius: 0.1, angular_velocity: [0, 1, 0]}"};
    const char *good[] = {
        "{type: sphere, center: [0, 0, 0], radius: 0.3, angular_velocity: [1, 2, 3]}",
        "{type: plane, point: [0, 0, 0], normal: [0, 0, 1], angular_velocity: [0, 0, -2]}",
        "{type: capsule, p0: [0, 0, 0], p1: [1, 0, 0], radius: 0.1, angular_velocity: [4, 0, 0]}"};
    for (int k = 0; k < 6; k++) {
        char text[512];
        snprintf(text, sizeof text, "name: s\nduration: 1\ndt: 0.1\ncloth: {grid: {nx: 2, ny: 2, size: [1, 1]}}\n"
                 "colliders:\n  - %s\n", k < 3 ? bad[k] : good[k - 3]);
        cb_scene *sc = NULL;
        cb_error e;
        cb_error_clear(&e);
        int rc = cb_scene_parse_string(text, "spin.yaml", ".", NULL, 0, &sc, &e);
        if (k < 3) {
            CU_ASSERT_EQUAL(rc, CB_ERR_INPUT);
            CU_ASSERT(strstr(e.message, "spin.yaml:6:") && strstr(e.message, "colliders.0.angular_velocity") &&
                      strstr(e.message, "mesh collider"));
            if (!strstr(e.message, "mesh collider")) fprintf(stderr, "  %s\n", e.message);
        } else {
            CU_ASSERT_EQUAL(rc, 0);
            if (rc) fprintf(stderr, "  %s\n", e.message);
        }
        cb_scene_free(&sc);
    }
}

/* Two pieces in one cloth: a 4 x 3 grid and a 5 x 5 grid moved up by translation, each
 * with its own velocity and pins (a grid selector and an index of its own). One mesh of
 * 12 + 25 vertices; no edge, triangle or hinge joins the pieces; each piece keeps its
 * velocity, and its pins are its own vertices. */
static const char *two_pieces =
    "name: two\nduration: 0.01\ndt: 0.001\ngravity: [0, 0, 0]\n"
    "cloth:\n  density: 0.2\n  pieces:\n"
    "    - {grid: {nx: 4, ny: 3, size: [0.3, 0.2]}, velocity: [1, 0, 0], pins: [{select: corners_top}]}\n"
    "    - {grid: {nx: 5, ny: 5, size: [0.4, 0.4], origin: [0, 0, 0.1]}, translation: [0, 0, 0.05],\n"
    "       velocity: [0, 0, -2], pins: [{indices: [0]}]}\n";

static void test_pieces_make_one_mesh(void)
{
    cb_sim s;
    CU_ASSERT_FATAL(cb_sim_world(&s, NULL, two_pieces, NULL, NULL, 0) == 0);
    const cb_world *w = s.w;
    const cb_mesh *m = w->mesh;
    CU_ASSERT_EQUAL(w->nv, 12 + 25);
    CU_ASSERT_EQUAL(m->nf, 2 * 3 * 2 + 2 * 4 * 4);
#define PIECE(i) ((i) >= 12)
    int joins = 0;
    for (int e = 0; e < m->ne; e++) joins += PIECE(m->e[e][0]) != PIECE(m->e[e][1]);
    for (int t = 0; t < m->nf; t++)
        joins += PIECE(m->f[t][0]) != PIECE(m->f[t][1]) || PIECE(m->f[t][0]) != PIECE(m->f[t][2]);
    for (int h = 0; h < m->nh; h++)
        for (int k = 1; k < 4; k++) joins += PIECE(m->h[h][0]) != PIECE(m->h[h][k]);
    CU_ASSERT_EQUAL(joins, 0);
    /* no two vertices of different pieces in the same place */
    double closest = INFINITY;
    for (int i = 0; i < 12; i++)
        for (int j = 12; j < w->nv; j++) closest = fmin(closest, cb_v3_dist(w->state.x[i], w->state.x[j]));
    CU_ASSERT(fabs(closest - 0.15) < 1e-12); /* the second grid lies 0.15 m above the first */
    /* pins: the first piece's top corners (8, 11), the second's vertex 0 (12) */
    CU_ASSERT_EQUAL(w->npinned, 3);
    CU_ASSERT(w->pinned[8] && w->pinned[11] && w->pinned[12]);
    int moving = 0;
    for (int i = 0; i < w->nv; i++) {
        if (w->pinned[i]) continue;
        double want[3] = {PIECE(i) ? 0 : 1, 0, PIECE(i) ? -2 : 0};
        moving += cb_v3_dist(w->state.v[i], want) == 0.0;
    }
    CU_ASSERT_EQUAL(moving, w->nv - 3);
#undef PIECE
    cb_sim_close(&s);
}

/* Every method steps a cloth of two pieces without error: nothing assumes one
 * connected piece. */
static void test_methods_step_pieces(void)
{
    for (int m = 0; m < cb_solver_count(); m++) {
        cb_sim s;
        CU_ASSERT_EQUAL(run_steps(&s, cb_solver_at(m)->name, two_pieces, 10), 0);
        cb_sim_close(&s);
    }
}

/* What a piece gives is refused on the cloth beside pieces, and a piece's pin index is
 * checked against the piece, not the whole cloth. */
static void test_pieces_bad_input(void)
{
    const char *cases[][2] = {
        {"cloth: {grid: {nx: 2, ny: 2, size: [1, 1]}, pieces: [{grid: {nx: 2, ny: 2, size: [1, 1]}}]}",
         "cloth.grid: with cloth.pieces, give grid in each piece"},
        {"cloth: {pieces: [{grid: {nx: 2, ny: 2, size: [1, 1]}, pins: [{indices: [4]}]},"
         " {grid: {nx: 2, ny: 2, size: [1, 1]}}]}",
         "pins: vertex index 4 out of range [0, 4)"},
        {"cloth: {pieces: []}", "cloth.pieces: expected a non-empty list"},
        {"cloth: {pieces: [{velocity: [0, 0, 1]}]}", "cloth.pieces.0: give exactly one of 'grid' and 'mesh'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char text[512];
        snprintf(text, sizeof text, "name: s\nduration: 1\ndt: 0.1\n%s\n", cases[k][0]);
        cb_sim s;
        int rc = cb_sim_world(&s, NULL, text, NULL, NULL, 0);
        CU_ASSERT_EQUAL(rc, CB_ERR_INPUT);
        CU_ASSERT(strstr(s.e.message, cases[k][1]) != NULL);
        if (!strstr(s.e.message, cases[k][1])) fprintf(stderr, "  wanted '%s'\n", cases[k][1]);
        cb_sim_close(&s);
    }
}

/* The gauntlet's scenes (data/scenes/gauntlet/): each loads and builds its world, and
 * its opening comment gives its source, what it stresses and what a correct method
 * does. The stacks hold their sheets; the half twist's grips have turned by a quarter
 * turn each, in opposite senses, at the end. */
static void test_gauntlet_scenes_load(void)
{
    DIR *d = opendir("data/scenes/gauntlet");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml")) continue;
        char path[1024];
        snprintf(path, sizeof path, "data/scenes/gauntlet/%s", e->d_name);
        cb_sim s;
        int rc = cb_sim_world(&s, path, NULL, NULL, NULL, 0);
        CU_ASSERT_EQUAL(rc, 0);
        if (rc) {
            fprintf(stderr, "  %s: %s\n", path, s.e.message);
            cb_sim_close(&s);
            continue;
        }
        static char t[8192];
        FILE *f = fopen(path, "r");
        size_t got = f ? fread(t, 1, sizeof t - 1, f) : 0;
        if (f) fclose(f);
        t[got] = '\0';
        int documented = strstr(t, "# Source:") && strstr(t, "# Stresses:") && strstr(t, "# A correct method:");
        if (!documented) fprintf(stderr, "  %s: the comment lacks Source, Stresses or A correct method\n", path);
        CU_ASSERT(documented);
        if (!strcmp(e->d_name, "stack3.yaml")) CU_ASSERT_EQUAL(s.w->nv, 3 * 900);
        if (!strcmp(e->d_name, "stack10.yaml")) CU_ASSERT_EQUAL(s.w->nv, 10 * 400);
        if (!strcmp(e->d_name, "twist_half.yaml")) {
            /* vertex 0 (left grip, y = -0.5) and vertex 29 (right grip): a quarter turn
             * about x each, in opposite senses, so -y goes to -z and to +z */
            double a[3], b[3];
            cb_world_pin_target(s.w, 0, s.scene->duration, a);
            cb_world_pin_target(s.w, 29, s.scene->duration, b);
            CU_ASSERT(fabs(a[1]) < 1e-12 && fabs(a[2] - 0.5) < 1e-12 && fabs(a[0] + 0.4) < 1e-12);
            CU_ASSERT(fabs(b[1]) < 1e-12 && fabs(b[2] - 1.5) < 1e-12 && fabs(b[0] - 0.4) < 1e-12);
        }
        cb_sim_close(&s);
        n++;
    }
    closedir(d);
    CU_ASSERT(n >= 7);
    /* and `clothbench list` shows them with the others */
    static char out[65536];
    CU_ASSERT(cb_test_clothbench(out, sizeof out, 1, "list") == 0);
    CU_ASSERT(strstr(out, "data/scenes/gauntlet/twist_half.yaml gauntlet_twist_half") != NULL);
    CU_ASSERT(strstr(out, "data/scenes/hanging.yaml") != NULL);
}

CB_TEST_MAIN("gauntlet",
             CB_TEST(test_gauntlet_scenes_load),
             CB_TEST(test_pieces_make_one_mesh),
             CB_TEST(test_pieces_bad_input),
             CB_TEST(test_methods_step_pieces),
             CB_TEST(test_rotating_pins_follow_the_rotation),
             CB_TEST(test_solvers_follow_rotating_pins),
             CB_TEST(test_spinning_sphere_drags_the_sheet),
             CB_TEST(test_spin_that_turns_the_shape_is_refused))
