/* contact/certificate.h — kinetic separating slabs for asynchronous contact mechanics
 * (Harmon et al. 2009). Primitives move linearly from time t0: x(t) = x + (t - t0) v.
 *
 * A certificate is a plane between the pair — through the midpoint of the closest
 * points, normal along the closest-point direction — moving with the pair's average
 * velocity (vertex-triangle: mean of the vertex's and the triangle's mean velocity;
 * edge-edge: mean of the four vertex velocities), with a fixed normal. While each
 * primitive's vertices stay on their own side at distance >= eta/2 from the plane, the
 * primitives (convex hulls of their vertices) are at least eta apart. Each vertex's
 * signed distance to the moving plane is linear in t, so the certificate's failure time
 * is the first zero of (signed distance - eta/2) over the vertices, in closed form.
 * A margin of 1e-10 x the coordinate scale (positions and positions at the horizon) is
 * added to eta/2 so rounding can never make the returned time late.
 *
 * Returns dt in [0, horizon] relative to t0: `horizon` if the certificate holds through
 * it, 0 if the pair is already closer than eta (or touching), or on non-finite input,
 * a NaN eta or a horizon that is not > 0. Never later than the first time the distance
 * drops below eta.
 */
#ifndef CB_CERTIFICATE_H
#define CB_CERTIFICATE_H

double cb_certificate_vertex_triangle(const double p[3], const double vp[3],
                                      const double a[3], const double va[3], const double b[3],
                                      const double vb[3], const double c[3], const double vc[3],
                                      double eta, double horizon);

double cb_certificate_edge_edge(const double p[3], const double vp[3], const double q[3],
                                const double vq[3], const double r[3], const double vr[3],
                                const double s[3], const double vs[3], double eta, double horizon);

#endif
