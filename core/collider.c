/* core/collider.c — collider descriptions (collider.h): defaults, names, release.
 * The queries are in contact/colliders.c. */
#include "core/collider.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


cb_collider cb_default_collider(cb_collider_type type)
{
    cb_collider c;
    memset(&c, 0, sizeof c);
    c.type = type;
    c.normal[2] = 1.0;
    for (int k = 0; k < 3; k++) c.axes[k][k] = 1.0;
    return c;
}

const char *cb_collider_type_name(cb_collider_type type)
{
    switch (type) {
    case CB_COLLIDER_PLANE: return "plane";
    case CB_COLLIDER_SPHERE: return "sphere";
    case CB_COLLIDER_BOX: return "box";
    case CB_COLLIDER_CAPSULE: return "capsule";
    case CB_COLLIDER_MESH: return "mesh";
    }
    return "?";
}

cb_trimesh_motion cb_trimesh_default_motion(void)
{
    cb_trimesh_motion mo;
    memset(&mo, 0, sizeof mo);
    mo.kind = CB_TRIMESH_STATIC;
    return mo;
}

void cb_collider_release(cb_collider *c)
{
    if (!c) return;
    if (c->mesh && c->mesh_free) c->mesh_free(&c->mesh);
    c->mesh = NULL;
    free(c->mesh_path);
    free(c->mesh_where);
    free((void *)c->mesh_motion.keys);
    c->mesh_path = c->mesh_where = NULL;
    c->mesh_motion.keys = NULL;
    c->mesh_motion.nkeys = 0;
}
