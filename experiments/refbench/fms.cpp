/* experiments/refbench/fms.cpp — timing driver for sam007961's FastMassSpring
 * (the public repository sam007961/FastMassSpring, checked at commit b873efc2), an implementation of
 * Liu et al. 2013, "Fast Simulation of Mass-Spring Systems": the reference side of the
 * fms rows of run.sh.
 *
 * This file is ours; the library is not copied: run.sh compiles this driver together
 * with ClothApp/MassSpringSolver.cpp from the source folder given on its command line
 * (it needs only Eigen: Debian's libeigen3-dev), with -O3 -DNDEBUG -march=native.
 *
 * What it runs, as the app's demo_hang (ClothApp/app.cpp) does minus rendering:
 *   - the system from MassSpringBuilder::uniformGrid(n, dt, rest length, k, mass,
 *     damping, gravity force): structural and shear springs, and bend springs from every
 *     other vertex (rows and columns of even index), all with the same stiffness k;
 *     uniform point masses; f_ext = (0, 0, -gravity) on every point;
 *   - MassSpringSolver(system, vbuff): builds M, L, J and prefactors M + h^2 L with
 *     Eigen's SimplicialLLT (timed as construct_ms, the prefactorization);
 *   - per step: solver.solve(iterations) (the local/global iterations, 10 by default)
 *     and the pins restored by the app's constraint graph (CgRootNode with a
 *     CgPointFixNode child, CgSatisfyVisitor), as animateCloth does after each solve.
 * Parameters (defaults chosen to match clothbench's scenes, see README.md): n x n
 * vertices over size x size metres (1 m), rest length size / (n - 1), k = 1000 N/m per
 * spring (the scenes' `stretch`), mass density * size^2 / n^2 per point (density 0.1
 * kg/m^2; the app also gives every point the same mass), gravity 9.81 m/s^2 (the
 * builder takes the force, 9.81 x mass), damping 0.993 (the app's `a`: the inertial
 * term is y = q_n + a (q_n - q_{n-1}); clothbench's fms damping d is y = q_n + (1 - d)
 * (q_n - q_{n-1}), so a = 0.993 is d = 0.007), dt 1/60 s.
 * Geometry and pins: --pins top: the cloth lies horizontal (z = 1), the row i = 0 (the
 * largest y) pinned, as clothbench's curtain; --pins corners: the cloth hangs vertical
 * (the xz plane), the two top corners (points 0 and n - 1, the app's) pinned, as
 * clothbench's hanging scene.
 *
 * Even n: uniformGrid asserts that n is odd, and for an even n it writes more bend
 * springs than it allocates (a bend spring from column n - 2 wraps into the next row,
 * one from row n - 2 points past the last vertex). For even n this driver builds the
 * same spring pattern itself (the bend springs that would leave the grid dropped) into
 * the library's mass_spring_system; for odd n it uses uniformGrid and checks that its
 * own builder gives the identical spring list (stderr says so).
 *
 * What it leaves out: the app's CgSpringDeformationNode (15 iterations of strain
 * limiting over the structural and shear springs after each step; not part of Liu et
 * al.'s method), the sphere collision of demo_drop, mesh normals, rendering, the app's
 * two solves per frame (one step here is one solve).
 *
 * Output: `fms n=<n> construct_ms <min> ms_per_step <min> median <median>` on stdout
 * (min and median over --repeats runs of --steps steps each, each run building a new
 * system and solver from the initial positions, after one untimed warm-up run of
 * --warmup steps), and a sanity line on stderr.
 */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "driver_util.h"

#include "ClothApp/MassSpringSolver.h"

namespace {

struct Options {
    int n = 81;
    double dt = 1.0 / 60.0;
    double k = 1000.0;
    double damping = 0.993;
    double density = 0.1;
    double size = 1.0;
    int iterations = 10;
    bool pin_top = true;
    int steps = 60;
    int repeats = 5;
    int warmup = 5;
};

[[noreturn]] void usage(const char *msg)
{
    if (msg) std::fprintf(stderr, "fms: %s\n", msg);
    std::fprintf(stderr,
                 "usage: fms [--n N] [--dt S] [--k N_PER_M] [--damping A] [--density D] [--size M]\n"
                 "           [--iterations N] [--pins top|corners] [--steps N] [--repeats N] [--warmup N]\n");
    std::exit(2);
}

Options parse(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string f = argv[i];
        if (f == "-h" || f == "--help") usage(nullptr);
        if (i + 1 >= argc) usage(("missing value after " + f).c_str());
        std::string val = argv[++i];
        if (f == "--pins") {
            if (val == "top") o.pin_top = true;
            else if (val == "corners") o.pin_top = false;
            else usage("--pins: top or corners");
            continue;
        }
        double v = refbench::parse_num("fms", f.c_str(), val.c_str());
        if (f == "--n") o.n = (int)v;
        else if (f == "--dt") o.dt = v;
        else if (f == "--k") o.k = v;
        else if (f == "--damping") o.damping = v;
        else if (f == "--density") o.density = v;
        else if (f == "--size") o.size = v;
        else if (f == "--iterations") o.iterations = (int)v;
        else if (f == "--steps") o.steps = (int)v;
        else if (f == "--repeats") o.repeats = (int)v;
        else if (f == "--warmup") o.warmup = (int)v;
        else usage(("unknown option " + f).c_str());
    }
    if (o.n < 3 || o.iterations < 1 || o.steps < 1 || o.repeats < 1 || o.warmup < 0 || !(o.dt > 0) ||
        !(o.k > 0) || !(o.density > 0) || !(o.size > 0))
        usage("n >= 3; iterations, steps, repeats >= 1; warmup >= 0; dt, k, density, size > 0");
    return o;
}

float node_mass(const Options &o) { return (float)(o.density * o.size * o.size / ((double)o.n * o.n)); }
float rest_length(const Options &o) { return (float)(o.size / (o.n - 1)); }

/* uniformGrid's spring pattern for any n (see the header), into the library's struct. */
mass_spring_system *own_grid(const Options &o)
{
    typedef mass_spring_system::Edge Edge;
    const unsigned int n = (unsigned)o.n;
    const float r = rest_length(o), k = (float)o.k, m = node_mass(o);
    std::vector<Edge> springs;
    std::vector<float> rest;
    auto add = [&](unsigned int a, unsigned int b, float len) {
        springs.push_back(Edge(a, b));
        rest.push_back(len);
    };
    for (unsigned int i = 0; i < n; i++)
        for (unsigned int j = 0; j < n; j++) {
            if (i == n - 1 && j == n - 1) continue;
            if (i == n - 1) {
                add(n * i + j, n * i + j + 1, r);
                if (j % 2 == 0 && j + 2 < n) add(n * i + j, n * i + j + 2, 2 * r);
                continue;
            }
            if (j == n - 1) {
                add(n * i + j, n * (i + 1) + j, r);
                if (i % 2 == 0 && i + 2 < n) add(n * i + j, n * (i + 2) + j, 2 * r);
                continue;
            }
            add(n * i + j, n * i + j + 1, r);
            add(n * i + j, n * (i + 1) + j, r);
            const float diag = (float)(1.41421356237 * r); /* uniformGrid: double root2 x float */
            add(n * i + j, n * (i + 1) + j + 1, diag);
            add(n * (i + 1) + j, n * i + j + 1, diag);
            if (j % 2 == 0 && j + 2 < n) add(n * i + j, n * i + j + 2, 2 * r);
            if (i % 2 == 0 && i + 2 < n) add(n * i + j, n * (i + 2) + j, 2 * r);
        }
    const unsigned int ns = (unsigned)springs.size(), np = n * n;
    Eigen::VectorXf rl = Eigen::Map<Eigen::VectorXf>(rest.data(), ns);
    Eigen::VectorXf fext = Eigen::Vector3f(0, 0, -(float)(9.81 * m)).replicate(np, 1);
    return new mass_spring_system(np, ns, (float)o.dt, springs, rl, Eigen::VectorXf::Constant(ns, k),
                                  Eigen::VectorXf::Constant(np, m), fext, (float)o.damping);
}

mass_spring_system *library_grid(const Options &o)
{
    MassSpringBuilder b;
    const float m = node_mass(o);
    b.uniformGrid((unsigned)o.n, (float)o.dt, rest_length(o), (float)o.k, m, (float)o.damping, (float)(9.81 * m));
    return b.getResult();
}

mass_spring_system *make_system(const Options &o)
{
    return o.n % 2 ? library_grid(o) : own_grid(o);
}

/* For odd n: our builder must give uniformGrid's springs exactly. */
bool same_springs(const Options &o)
{
    mass_spring_system *a = library_grid(o), *b = own_grid(o);
    bool same = a->n_springs == b->n_springs && a->spring_list == b->spring_list &&
                (a->rest_lengths - b->rest_lengths).cwiseAbs().maxCoeff() <= 1e-6f * rest_length(o) &&
                a->stiffnesses == b->stiffnesses && a->fext == b->fext;
    delete a;
    delete b;
    return same;
}

std::vector<float> initial_positions(const Options &o)
{
    const int n = o.n;
    const double d = o.size / (n - 1);
    std::vector<float> x(3 * (size_t)n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float *p = &x[3 * (size_t)(i * n + j)];
            const double u = -0.5 * o.size + d * j, w = 0.5 * o.size - d * i; /* row 0 on top */
            if (o.pin_top) { p[0] = (float)u; p[1] = (float)w; p[2] = 1.0f; }
            else { p[0] = (float)u; p[1] = 0.0f; p[2] = (float)(w + 0.5 * o.size); }
        }
    return x;
}

struct Run {
    double construct_ms, ms_per_step;
};

Run run(const Options &o, int steps, std::vector<float> &x)
{
    x = initial_positions(o);
    mass_spring_system *sys = make_system(o);
    const double t0 = refbench::now_ms();
    MassSpringSolver *solver = new MassSpringSolver(sys, x.data());
    const double t1 = refbench::now_ms();

    CgRootNode root(sys, x.data());
    CgPointFixNode pins(sys, x.data());
    if (o.pin_top)
        for (int j = 0; j < o.n; j++) pins.fixPoint((unsigned)j);
    else {
        pins.fixPoint(0);
        pins.fixPoint((unsigned)o.n - 1);
    }
    root.addChild(&pins);
    CgSatisfyVisitor visitor;

    const double t2 = refbench::now_ms();
    for (int s = 0; s < steps; s++) {
        solver->solve((unsigned)o.iterations);
        visitor.satisfy(root);
    }
    const double t3 = refbench::now_ms();
    delete solver;
    delete sys;
    return Run{t1 - t0, steps ? (t3 - t2) / steps : 0.0};
}

} // namespace

int main(int argc, char **argv)
{
    const Options o = parse(argc, argv);
    const char *builder = o.n % 2 ? "uniformGrid" : "own (even n)";
    if (o.n % 2 && !same_springs(o)) {
        std::fprintf(stderr, "fms: own builder differs from uniformGrid at n = %d\n", o.n);
        return 1;
    }
    std::vector<float> x;
    if (o.warmup > 0) run(o, o.warmup, x);
    std::vector<double> ms, cms;
    for (int r = 0; r < o.repeats; r++) {
        Run res = run(o, o.steps, x);
        ms.push_back(res.ms_per_step);
        cms.push_back(res.construct_ms);
    }
    const double median = refbench::sorted_median(ms);
    std::sort(cms.begin(), cms.end());

    /* sanity: the state after the last run */
    mass_spring_system *sys = make_system(o);
    double max_strain = 0.0, min_z = 1e30;
    bool finite = true;
    for (unsigned int s = 0; s < sys->n_springs; s++) {
        const auto &e = sys->spring_list[s];
        const float *a = &x[3 * e.first], *b = &x[3 * e.second];
        const double l = std::sqrt((double)(a[0] - b[0]) * (a[0] - b[0]) + (double)(a[1] - b[1]) * (a[1] - b[1]) +
                                   (double)(a[2] - b[2]) * (a[2] - b[2]));
        max_strain = std::max(max_strain, std::fabs(l / sys->rest_lengths[s] - 1.0));
    }
    for (float v : x) finite = finite && std::isfinite(v);
    for (size_t i = 2; i < x.size(); i += 3) min_z = std::min(min_z, (double)x[i]);
    std::fprintf(stderr,
                 "fms: n=%d points=%u springs=%u builder=%s pins=%s dt=%g k=%g damping=%g mass=%g "
                 "iterations=%d after %d steps: max_strain=%.3g min_z=%.3g%s\n",
                 o.n, sys->n_points, sys->n_springs, builder, o.pin_top ? "top" : "corners", o.dt, o.k, o.damping,
                 (double)node_mass(o), o.iterations, o.steps, max_strain, min_z, finite ? "" : " NOT FINITE");
    delete sys;
    std::printf("fms n=%d construct_ms %.6g ms_per_step %.6g median %.6g\n", o.n, cms[0], ms[0], median);
    return finite ? 0 : 1;
}
