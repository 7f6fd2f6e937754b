/* solvers/pbd_internal.h — the state of the pbd/xpbd solver and what its three files
 * share: solvers/pbd.c (the projections, the sweeps and the step), solvers/pbd_layout.c
 * (the parameters and the constraint graph: constraints, colours, mesh parts, SIMD
 * batches) and solvers/pbd_contact.c (the collider and self contact constraints). */
#ifndef CB_PBD_INTERNAL_H
#define CB_PBD_INTERNAL_H

#include "contact/contact_probe.h"
#include "contact/spatial_hash.h"
#include "core/params.h"
#include "core/solver.h"
#include "core/vec3.h"
#include "core/world.h"
#include "solvers/pbd_simd.h"

enum { T_STRETCH = 0, T_BEND = 1, T_TET = 2 };
enum { STEP_SMALL = 0, STEP_PAPER = 1 };
#define MAX_COLOURS 256

/* One colour of one constraint type: constraints [begin, end); with the SIMD path, the
 * ones whose vertices are all free come first, [begin, mid), as the batches [b0, b1). */
typedef struct block { int type, begin, end, mid, b0, b1; } block;

/* Internal constraints as compact records: vertex indices, their inverse masses
 * (gathered at create: a pinned vertex has 0 and is never written) and the rest value
 * (length L, the bending rest angle, the rest 6V). Stored colour by colour, sorted by
 * vertex index within a colour. */
typedef struct scon { int v[2]; double w[2]; double rest; } scon;
typedef struct qcon { int v[4]; double w[4]; double rest; } qcon;

typedef struct coll_con {   /* collider constraint (p - q) . n >= 0 on one vertex */
    int v, col;
    double q[3], n[3];
    double vn0;             /* normal velocity relative to the collider before the solve */
    double vc[3];           /* the collider's surface velocity at the end of the substep (its work) */
    double push;            /* the constraint's normal corrections summed over the sweeps (m) */
    int active;
} coll_con;

typedef struct self_con { int v[4]; double side; int active; } self_con;

typedef struct pbd_solver {
    int xpbd;
    int iterations, substeps;
    double k_stretch, k_bend, k_volume;     /* pbd: effective k' per type */
    double ks_raw, kb_raw, kv_raw;          /* pbd: the stiffnesses as given */
    int kprime_sweeps;                      /* the sweep count k' was computed for */
    int stepping;                           /* STEP_SMALL or STEP_PAPER */
    double max_substep;                     /* small_steps: the longest substep (s) */
    double bend_cap;                        /* pbd: largest bending step (rad) per projection */
    int bending;                            /* 0 paper, 1 dihedral */
    double k_damping, drag, offset;
    double k_damping_sub;                   /* per substep: 1 - (1 - k_damping)^(1/n) (small_steps) */
    int self_collision;
    double self_h, self_margin;
    double pressure;
    int parallel;
    int mesh_order;                         /* 1: serial sweeps in mesh order, no colouring */
    int simd;                               /* the SIMD width (solvers/pbd_simd.h): 8, 4, 0 = off */
    int parts;                              /* the parameter: mesh parts swept without barriers */
    int nparts;                             /* parts in use (1: a barrier after every colour) */
    int *part_block;                        /* [nparts + 1]: part q is blocks part_block[q..q+1),
                                             * the boundary blocks part_block[nparts..nblocks) */
    const cb_mesh *mesh;
    int nv;
    const double *w;                        /* inverse masses (the world's) */
    const double (*pin_omega)[3];           /* the pins' angular velocities (the world's) */
    /* internal constraints, stored by colour (xpbd: compliance and multiplier arrays) */
    int ns, nb, nt;
    scon *st; double *salpha, *slambda;
    qcon *bd; double *balpha, *blambda;
    qcon *te; double *talpha, *tlambda;
    int nblocks; block *blocks;
    cb_pbd_batch2 *sbat; cb_pbd_batch4 *bbat; /* SIMD batches of stretch and bending constraints */
    double inv_h2;                          /* 1/h^2 of the current substep (xpbd) */
    /* per-vertex work arrays. The prediction p has a fourth coordinate, the inverse mass
     * (set each substep): a point is one aligned 32-byte load and store in the SIMD
     * kernels (solvers/pbd_simd.h);
     * pk is p packed as xyz triples for the contact library (self contact, the probe),
     * refreshed where they need it */
    double (*p)[4], (*pk)[3], (*vpred)[3];
    void *pmem;                             /* the allocation p is aligned in */
    /* collider constraints */
    int ncc, capcc; coll_con *cc;
    /* self collision */
    cb_spatial_hash *hash;
    int nsc, capsc; self_con *sc;
    /* small_steps: the candidate cache (solvers/pbd_contact.c): the (vertex, triangle)
     * pairs within reach + cache_delta of each other's box at positions pb, reused by every
     * substep (and step) while the cloth's motion relative to itself since pb stays below
     * half of cache_delta */
    int self_cache;                         /* the parameter: 0 searches every substep */
    long ncand, capcand; int (*cand)[2];
    double (*pb)[3];
    double cache_delta;                     /* 0: no valid cache */
    long cache_builds, cache_substeps;      /* spatial hash queries; substeps served */
    /* tests only: called after each substep's self-contact constraints (p: the prediction) */
    void (*self_hook)(void *ctx, const struct pbd_solver *s);
    void *self_hook_ctx;
    /* pressure */
    double v6rest;
    double (*grad)[3];
    cb_contact_probe *probe;                /* measures the stage after the solve (colliders only) */
    /* the impulse of what is outside the cloth (colliders, attachments, drag), summed
     * where it acts: never inferred from the momentum change, so that the shared
     * momentum balance checks the internal constraints (which must conserve it) */
    double ext[3];                          /* this step's, N s */
    double work;                            /* this step's external_work: those impulses but
                                             * drag times the velocity of what applies them (J) */
    double (*jthr)[4];                      /* per thread: m dp of attached constraints, and in
                                             * [3] m dp . u, u the velocity of the pin or
                                             * collider that applies it */
    int nthr;
} pbd_solver;

/* A constraint with a pinned participant (inverse mass 0) moves only its free ones: the
 * attachment's impulse times h is their mass-weighted displacement, added to acc.
 * Constraints among free vertices move their centre of mass by nothing: they are not
 * counted, so the momentum balance tests them. */
static inline int attached(const double *w, int n)
{
    for (int j = 0; j < n; j++)
        if (w[j] == 0.0) return 1;
    return 0;
}

/* The velocity at x of the rigid motion of pinned vertex P at the end of the substep
 * (its velocity vpred[P] there, its angular velocity, its position p[P]). The
 * constraint's impulse on its free participants, m dp / h, is balanced by the pins'
 * (the gradients of a constraint sum to zero, and their moments too), so the work the
 * pins do through it is sum m dp_j / h . u(x_j) when they move as one rigid body:
 * exact for fixed, translating and rotating grips. */
static inline void pin_field(const double (*pin_omega)[3], const double (*vpred)[3], const double (*p)[4], int P,
                             const double x[3], double u[3])
{
    double r[3], wr[3];
    cb_v3_sub(r, x, p[P]);
    cb_v3_cross(wr, pin_omega[P], r);
    cb_v3_add(u, vpred[P], wr);
}

/* p as xyz triples (s->pk, refreshed), for the contact library */
static inline const double (*packed_p(pbd_solver *s))[3]
{
    for (int i = 0; i < s->nv; i++)
        for (int k = 0; k < 3; k++) s->pk[i][k] = s->p[i][k];
    return (const double (*)[3])s->pk;
}

/* pbd_layout.c: create (the parameters, the constraints in colour order, the mesh parts,
 * the SIMD batches; xpbd: 1 for xpbd) and destroy; k' of a stiffness for a sweep count
 * (Mueller et al. 2007 section 3.3) and set for the current one; the substeps of a step. */
int cb_pbd_create(const cb_world *w, const cb_params *prm, int xpbd, void **self, cb_error *err);
void cb_pbd_destroy(void *self);
double cb_pbd_kprime(double k, int iterations);
void cb_pbd_set_kprime(pbd_solver *s, int sweeps);
int cb_pbd_substep_count(const pbd_solver *s, double dt);

/* pbd_contact.c: the collider constraints of a substep [t0, t0 + h], the self-contact
 * constraints of the substep's prediction s->p (paper: a spatial-hash query; small_steps:
 * the candidate cache), the final collider pass at t1 (its count of vertices moved) and
 * the contact velocities (restitution and friction) at t1 after the substep of length h. */
void cb_pbd_collider_constraints(pbd_solver *s, const cb_world *w, double t0, double h);
int cb_pbd_self_constraints(pbd_solver *s, const cb_world *w, cb_error *err);
int cb_pbd_final_collider_pass(pbd_solver *s, const cb_world *w, double t1);
void cb_pbd_contact_velocities(pbd_solver *s, cb_world *w, double t1, double h);

#endif
