/* experiments/refbench/pbd_bend.cpp — timing driver for Bender et al.'s
 * PositionBasedDynamics library (the public repository InteractiveComputerGraphics/PositionBasedDynamics,
 * checked at commit d0894bdb), the reference side of the `pbd_bend` row of run.sh.
 *
 * This file is ours; the library is not copied: run.sh compiles this driver together
 * with the library's own PositionBasedDynamics/PositionBasedDynamics.cpp,
 * PositionBasedDynamics/TimeIntegration.cpp, PositionBasedDynamics/MathFunctions.cpp and
 * Utils/IndexedFaceMesh.cpp, taken from the source folder given on its command line,
 * with the library's Release flags (-O3 -DNDEBUG -march=native, -DUSE_DOUBLE, -fopenmp).
 *
 * Problem: an n x n vertex cloth (default 60 x 60), a 1 m x 1 m square in the xy plane
 * on a regular grid, triangulated with alternating diagonals as the library's
 * SimulationModel::addRegularTriangleModel does; density 0.1 kg/m^2 lumped to the
 * vertices (a third of each adjacent triangle's area); the two corners with the largest
 * y pinned (mass 0, inverse mass 0); gravity (0, 0, -9.81). dt = 1/60 s.
 *
 * What it mirrors (Simulation/TimeStepController.cpp::step and
 * positionConstraintProjection, with the cloth demo's constraints):
 *   - the mesh's edges and edge-face adjacency come from the library's own
 *     Utilities::IndexedFaceMesh::buildNeighbors (as TriangleModel::initMesh);
 *   - constraints as SimulationModel::addClothConstraints(method 1 = distance) and
 *     addBendingConstraints(method 1 = dihedral) create them, in the same order and
 *     with the same vertex order: one distance constraint per edge (stiffness 1, the
 *     cloth demo's), then one dihedral constraint per interior edge (stiffness 0.01, the
 *     cloth demo's and SimulationModel's default bending stiffness); rest length and
 *     rest angle computed from the initial positions as DistanceConstraint /
 *     DihedralConstraint::initConstraint do (the library has no init_ function for
 *     these two; the two formulas are written out below);
 *   - the constraint groups of SimulationModel::initConstraintGroups (greedy: each
 *     constraint goes to the first group where none of its particles is used yet);
 *   - per substep of h = dt / substeps: acceleration = gravity for particles with
 *     mass != 0 (TimeStep::clearAccelerations), old/last position bookkeeping and
 *     TimeIntegration::semiImplicitEuler per particle; `iterations` Gauss-Seidel sweeps
 *     group by group, each constraint projected with the library's
 *     PositionBasedDynamics::solve_DistanceConstraint / solve_DihedralConstraint and
 *     its corrections added where the inverse mass is not 0 (as
 *     DistanceConstraint / DihedralConstraint::solvePositionConstraint); then
 *     TimeIntegration::velocityUpdateFirstOrder (velocity update method 0, the default).
 *     Defaults here: substeps 1, iterations 10 (the library's TimeStepController
 *     defaults are 5 substeps x 1 iteration; --substeps / --iterations change it);
 *   - threads: the library's functions called here have no OpenMP, but its
 *     TimeStepController runs each constraint group as `#pragma omp parallel
 *     if(groupSize > MIN_PARALLEL_SIZE)` (64); this driver does the same, so the
 *     projection uses OMP_NUM_THREADS threads. The particle loops in the library's step
 *     are in `omp parallel if(numBodies > 64)` regions where numBodies counts rigid
 *     bodies (0 here), so they run serially, here too.
 *
 * What it leaves out: collision detection (the library's m_collisionDetection, none in
 * the cloth demo anyway), the velocity constraint projection (maxIterationsV passes that
 * call virtual no-op solveVelocityConstraint / updateConstraint for these constraint
 * types), rigid bodies and orientations (none), motor targets, the TimeManager, the
 * Simulation / SimulationModel / ParticleData objects and the virtual call per
 * constraint (constraints are stored here as plain records), timing macros, normals
 * and rendering.
 *
 * Output: after --warmup steps, --repeats runs of --steps steps each (each run restarts
 * from the initial state), one line on stdout:
 *   pbd_bend ms_per_step <min over repeats> median <median over repeats>
 * and a sanity line on stderr (threads, counts, max edge strain, lowest z).
 */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "driver_util.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#include "PositionBasedDynamics/PositionBasedDynamics.h"
#include "PositionBasedDynamics/TimeIntegration.h"
#include "Utils/IndexedFaceMesh.h"

#ifndef USE_DOUBLE
#error "compile with -DUSE_DOUBLE (run.sh does): the comparison is in double precision"
#endif

namespace {

const int MIN_PARALLEL = 64; /* the library's MIN_PARALLEL_SIZE (Common/Common.h) */

struct Options {
    int n = 60;
    double dt = 1.0 / 60.0;
    int iterations = 10;
    int substeps = 1;
    double stretch_stiffness = 1.0;
    double bend_stiffness = 0.01;
    double density = 0.1;
    int steps = 60;
    int repeats = 5;
    int warmup = 5;
};

/* One constraint record: kind 0 = distance (bodies 0..1), 1 = dihedral (bodies 0..3). */
struct Con {
    int kind;
    unsigned int body[4];
    Real rest;
    Real stiffness;
};

/* The particle state, as the library's ParticleData keeps it (one array per quantity). */
struct State {
    std::vector<Vector3r> x, x_old, x_last, v, a;
    std::vector<Real> mass, inv_mass;
};

[[noreturn]] void usage(const char *msg)
{
    if (msg) std::fprintf(stderr, "pbd_bend: %s\n", msg);
    std::fprintf(stderr,
                 "usage: pbd_bend [--n N] [--dt S] [--iterations N] [--substeps N]\n"
                 "                [--stretch-stiffness K] [--bend-stiffness K] [--density D]\n"
                 "                [--steps N] [--repeats N] [--warmup N]\n");
    std::exit(2);
}

Options parse(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string f = argv[i];
        if (f == "-h" || f == "--help") usage(nullptr);
        if (i + 1 >= argc) usage(("missing value after " + f).c_str());
        double v = refbench::parse_num("pbd_bend", argv[i], argv[i + 1]);
        i++;
        if (f == "--n") o.n = (int)v;
        else if (f == "--dt") o.dt = v;
        else if (f == "--iterations") o.iterations = (int)v;
        else if (f == "--substeps") o.substeps = (int)v;
        else if (f == "--stretch-stiffness") o.stretch_stiffness = v;
        else if (f == "--bend-stiffness") o.bend_stiffness = v;
        else if (f == "--density") o.density = v;
        else if (f == "--steps") o.steps = (int)v;
        else if (f == "--repeats") o.repeats = (int)v;
        else if (f == "--warmup") o.warmup = (int)v;
        else usage(("unknown option " + f).c_str());
    }
    if (o.n < 2 || o.iterations < 1 || o.substeps < 1 || o.steps < 1 || o.repeats < 1 || o.warmup < 0 ||
        !(o.dt > 0) || !(o.density > 0))
        usage("n >= 2, iterations, substeps, steps, repeats >= 1, warmup >= 0, dt and density > 0");
    return o;
}

/* The regular grid's faces with alternating diagonals, in the order and orientation of
 * SimulationModel::addRegularTriangleModel (vertex i * n + j at x = j dx, y = i dy). */
std::vector<unsigned int> grid_faces(int n)
{
    std::vector<unsigned int> f;
    f.reserve(6 * (size_t)(n - 1) * (n - 1));
    for (int i = 0; i < n - 1; i++)
        for (int j = 0; j < n - 1; j++) {
            const int alt = (i % 2 == j % 2) ? 1 : 0;
            const unsigned int t[6] = {(unsigned)(i * n + j), (unsigned)(i * n + j + 1),
                                       (unsigned)((i + 1) * n + j + alt), (unsigned)((i + 1) * n + j + 1),
                                       (unsigned)((i + 1) * n + j), (unsigned)(i * n + j + 1 - alt)};
            f.insert(f.end(), t, t + 6);
        }
    return f;
}

/* Rest angle of a dihedral constraint: the formula of DihedralConstraint::initConstraint. */
Real dihedral_rest_angle(const Vector3r &p0, const Vector3r &p1, const Vector3r &p2, const Vector3r &p3)
{
    Vector3r n1 = (p2 - p0).cross(p3 - p0);
    Vector3r n2 = (p3 - p1).cross(p2 - p1);
    n1.normalize();
    n2.normalize();
    Real d = std::max<Real>(-1.0, std::min<Real>(1.0, n1.dot(n2)));
    return std::acos(d);
}

struct Cloth {
    Options o;
    State s0;                               /* the initial state, copied at each run */
    std::vector<Con> cons;
    std::vector<std::vector<unsigned int>> groups;
    Utilities::IndexedFaceMesh mesh;
    size_t n_dist = 0, n_bend = 0;

    explicit Cloth(const Options &opt) : o(opt)
    {
        const int n = o.n;
        const unsigned int nv = (unsigned)(n * n);
        const Real dx = 1.0 / (n - 1);
        State &s = s0;
        s.x.resize(nv);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) s.x[i * n + j] = Vector3r(dx * j, dx * i, 0.0);
        s.x_old = s.x_last = s.x;
        s.v.assign(nv, Vector3r::Zero());
        s.a.assign(nv, Vector3r::Zero());

        std::vector<unsigned int> faces = grid_faces(n);
        const unsigned int nf = (unsigned)faces.size() / 3;
        mesh.initMesh(nv, nf * 2, nf); /* as TriangleModel::initMesh */
        for (unsigned int t = 0; t < nf; t++) mesh.addFace(&faces[3 * t]);
        mesh.buildNeighbors();

        /* lumped mass: a third of each adjacent triangle's area times the density */
        s.mass.assign(nv, 0.0);
        for (unsigned int t = 0; t < nf; t++) {
            const unsigned int *v = &faces[3 * t];
            Real area = 0.5 * (s.x[v[1]] - s.x[v[0]]).cross(s.x[v[2]] - s.x[v[0]]).norm();
            for (int k = 0; k < 3; k++) s.mass[v[k]] += o.density * area / 3.0;
        }
        s.mass[(n - 1) * n] = 0.0;         /* the corners with the largest y: pinned */
        s.mass[(n - 1) * n + n - 1] = 0.0;
        s.inv_mass.resize(nv);
        for (unsigned int i = 0; i < nv; i++) s.inv_mass[i] = s.mass[i] != 0.0 ? 1.0 / s.mass[i] : 0.0;

        /* distance constraints per edge (addClothConstraints, method 1) */
        const auto &edges = mesh.getEdges();
        for (const auto &e : edges) {
            Con c{0, {e.m_vert[0], e.m_vert[1], 0, 0}, (s.x[e.m_vert[1]] - s.x[e.m_vert[0]]).norm(),
                  (Real)o.stretch_stiffness};
            cons.push_back(c);
        }
        n_dist = cons.size();
        /* dihedral constraints per interior edge (addBendingConstraints, method 1):
         * bodies = the two opposite vertices, then the edge's two vertices */
        const auto &tris = mesh.getFaces();
        for (const auto &e : edges) {
            const unsigned int t1 = e.m_face[0], t2 = e.m_face[1];
            if (t1 == 0xffffffffu || t2 == 0xffffffffu) continue;
            int p1 = -1, p2 = -1;
            for (int j = 0; j < 3; j++)
                if (tris[3 * t1 + j] != e.m_vert[0] && tris[3 * t1 + j] != e.m_vert[1]) { p1 = (int)tris[3 * t1 + j]; break; }
            for (int j = 0; j < 3; j++)
                if (tris[3 * t2 + j] != e.m_vert[0] && tris[3 * t2 + j] != e.m_vert[1]) { p2 = (int)tris[3 * t2 + j]; break; }
            if (p1 < 0 || p2 < 0) continue;
            Con c{1, {(unsigned)p1, (unsigned)p2, e.m_vert[0], e.m_vert[1]}, 0.0, (Real)o.bend_stiffness};
            const Vector3r &a = s.x[c.body[0]], &b = s.x[c.body[1]], &q = s.x[c.body[2]], &r = s.x[c.body[3]];
            if ((r - q).norm() < 1e-6) continue; /* initConstraint returns false: not added */
            c.rest = dihedral_rest_angle(a, b, q, r);
            cons.push_back(c);
        }
        n_bend = cons.size() - n_dist;

        /* groups as SimulationModel::initConstraintGroups: first group with none of the
         * constraint's particles marked, else a new group */
        std::vector<std::vector<unsigned char>> used;
        for (unsigned int ci = 0; ci < cons.size(); ci++) {
            const Con &c = cons[ci];
            const int nb = c.kind == 0 ? 2 : 4;
            size_t g = 0;
            for (; g < groups.size(); g++) {
                bool free = true;
                for (int k = 0; k < nb && free; k++) free = !used[g][c.body[k]];
                if (free) break;
            }
            if (g == groups.size()) {
                groups.emplace_back();
                used.emplace_back(nv, 0);
            }
            groups[g].push_back(ci);
            for (int k = 0; k < nb; k++) used[g][c.body[k]] = 1;
        }
    }

    /* One constraint projection, as Distance/DihedralConstraint::solvePositionConstraint. */
    static inline void project(const Con &c, State &s)
    {
        using PBD::PositionBasedDynamics;
        if (c.kind == 0) {
            const unsigned int i1 = c.body[0], i2 = c.body[1];
            Vector3r &x1 = s.x[i1], &x2 = s.x[i2];
            const Real w1 = s.inv_mass[i1], w2 = s.inv_mass[i2];
            Vector3r c1, c2;
            if (PositionBasedDynamics::solve_DistanceConstraint(x1, w1, x2, w2, c.rest, c.stiffness, c1, c2)) {
                if (w1 != 0.0) x1 += c1;
                if (w2 != 0.0) x2 += c2;
            }
        } else {
            Vector3r *x[4];
            Real w[4];
            for (int k = 0; k < 4; k++) {
                x[k] = &s.x[c.body[k]];
                w[k] = s.inv_mass[c.body[k]];
            }
            Vector3r c0, c1, c2, c3;
            if (PositionBasedDynamics::solve_DihedralConstraint(*x[0], w[0], *x[1], w[1], *x[2], w[2], *x[3], w[3],
                                                                c.rest, c.stiffness, c0, c1, c2, c3)) {
                if (w[0] != 0.0) *x[0] += c0;
                if (w[1] != 0.0) *x[1] += c1;
                if (w[2] != 0.0) *x[2] += c2;
                if (w[3] != 0.0) *x[3] += c3;
            }
        }
    }

    void step(State &s) const
    {
        const Real h = o.dt / o.substeps;
        const Vector3r gravity(0.0, 0.0, -9.81);
        const int nv = (int)s.x.size();
        for (int i = 0; i < nv; i++) s.a[i] = s.mass[i] != 0.0 ? gravity : Vector3r::Zero();
        for (int sub = 0; sub < o.substeps; sub++) {
            for (int i = 0; i < nv; i++) {
                s.x_last[i] = s.x_old[i];
                s.x_old[i] = s.x[i];
                PBD::TimeIntegration::semiImplicitEuler(h, s.mass[i], s.x[i], s.v[i], s.a[i]);
            }
            for (int it = 0; it < o.iterations; it++)
                for (const auto &g : groups) {
                    const int gs = (int)g.size();
                    const Con *cs = cons.data();
                    const unsigned int *gi = g.data();
#pragma omp parallel for schedule(static) if (gs > MIN_PARALLEL) default(shared)
                    for (int k = 0; k < gs; k++) project(cs[gi[k]], s);
                }
            for (int i = 0; i < nv; i++)
                PBD::TimeIntegration::velocityUpdateFirstOrder(h, s.mass[i], s.x[i], s.x_old[i], s.v[i]);
        }
    }
};

} // namespace

int main(int argc, char **argv)
{
    const Options o = parse(argc, argv);
    Cloth cloth(o);

    State s = cloth.s0;
    for (int k = 0; k < o.warmup; k++) cloth.step(s);

    std::vector<double> ms(o.repeats);
    for (int r = 0; r < o.repeats; r++) {
        s = cloth.s0;
        const double t0 = refbench::now_ms();
        for (int k = 0; k < o.steps; k++) cloth.step(s);
        ms[r] = (refbench::now_ms() - t0) / o.steps;
    }
    std::vector<double> sorted = ms;
    const double median = refbench::sorted_median(sorted);

    /* sanity (not timed): the state after the last run */
    double max_strain = 0.0, min_z = 0.0;
    bool finite = true;
    for (size_t c = 0; c < cloth.n_dist; c++) {
        const Con &k = cloth.cons[c];
        const double l = (s.x[k.body[1]] - s.x[k.body[0]]).norm();
        max_strain = std::max(max_strain, std::fabs(l / k.rest - 1.0));
    }
    for (const auto &x : s.x) {
        finite = finite && x.allFinite();
        min_z = std::min(min_z, (double)x[2]);
    }
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    std::fprintf(stderr,
                 "pbd_bend: n=%d vertices=%d distance=%zu dihedral=%zu groups=%zu threads=%d "
                 "dt=%g substeps=%d iterations=%d after %d steps: max_strain=%.3g min_z=%.3g%s\n",
                 o.n, o.n * o.n, cloth.n_dist, cloth.n_bend, cloth.groups.size(), threads, o.dt, o.substeps,
                 o.iterations, o.steps, max_strain, min_z, finite ? "" : " NOT FINITE");
    std::printf("pbd_bend ms_per_step %.6g median %.6g\n", sorted[0], median);
    return finite ? 0 : 1;
}
