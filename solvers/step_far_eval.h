/* solvers/step_far_eval.h — cb_step_contact_far's formula on a vector of pairs, written
 * once for any width. Included by solvers/step_far.c for each instruction set after it
 * defines the vector type V, the mask type M, the attribute KERNEL and the primitives
 * add, sub, mul, vdiv, gt (a > b), ge, le, m_and and sel (m ? a : b); everything here is
 * static to that file. Each lane computes the single pair's operations in its order
 * (every comparison ordered, as C's), its ternaries as selects, so its answer is the
 * single pair's bit for bit. */

typedef struct V3 { V x, y, z; } V3;

static inline KERNEL V3 v3sub(V3 a, V3 b) { return (V3){sub(a.x, b.x), sub(a.y, b.y), sub(a.z, b.z)}; }
static inline KERNEL V v3dot(V3 a, V3 b) { return add(add(mul(a.x, b.x), mul(a.y, b.y)), mul(a.z, b.z)); }
static inline KERNEL V3 v3cross(V3 a, V3 b)
{
    return (V3){sub(mul(a.y, b.z), mul(a.z, b.y)), sub(mul(a.z, b.x), mul(a.x, b.z)), sub(mul(a.x, b.y), mul(a.y, b.x))};
}

/* one edge's in-plane term: o > 0 && o o > best l ? o o / l : best */
static inline KERNEL V edge_term(V3 d, V3 n, V3 e, V l, V best)
{
    V o = v3dot(d, v3cross(n, e)), oo = mul(o, o);
    return sel(m_and(gt(o, set1(0.0)), gt(oo, mul(best, l))), vdiv(oo, l), best);
}

/* The lanes whose pair (p; a, b, q) is far (cb_step_contact_far returns 1). */
static inline KERNEL M far_lanes(V3 p, V3 a, V3 b, V3 q, double dist2)
{
    V3 e0 = v3sub(b, a), e1 = v3sub(q, b), e2 = v3sub(a, q), dp = v3sub(p, a);
    V l0 = v3dot(e0, e0), l1 = v3dot(e1, e1), l2 = v3dot(e2, e2);
    V3 n = v3cross(e0, e2);
    V nn = v3dot(n, n);
    V lmax = sel(gt(l0, l1), sel(gt(l0, l2), l0, l2), sel(gt(l1, l2), l1, l2));
    M decide = m_and(ge(nn, mul(mul(set1(1e-6), l0), l2)), le(lmax, set1(1e8 * dist2)));
    V s = v3dot(dp, n), best = set1(0.0);
    best = edge_term(dp, n, e0, l0, best);
    best = edge_term(v3sub(p, b), n, e1, l1, best);
    best = edge_term(v3sub(p, q), n, e2, l2, best);
    return m_and(decide, gt(add(mul(s, s), best), mul(set1((1.0 + 1e-5) * (1.0 + 1e-5) * dist2), nn)));
}
