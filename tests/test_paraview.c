/* tests/test_paraview.c — a run's XDMF sidecar opened by ParaView's real readers
 * (pvpython, Debian's python3-paraview): the XDMF3 readers (Xdmf3ReaderS, Xdmf3ReaderT)
 * and the legacy XDMF reader, by absolute path and by a relative one ("./X.xdmf"),
 * each giving the run's point and triangle counts, every frame as a time step and the
 * last frame's positions exactly as /frames/positions holds them
 * (tests/paraview_check.py does the reading). Without pvpython the suite fails in CI
 * (CI=true) and says why, and passes with a note elsewhere. */
#include "cb_test.h"

#include <hdf5.h>
#include <unistd.h>

static char out[65536];

static int have_pvpython(void)
{
    return cb_test_shell(out, sizeof out, "command -v pvpython") == 0;
}

static int in_ci(void)
{
    const char *ci = getenv("CI");
    return ci && !strcmp(ci, "true");
}

/* The run: a small drape with frames; its counts read back from the HDF5 file. */
static int make_run(char *dir, size_t n, long *nv, long *nf, long *frames)
{
    snprintf(dir, n, "%s/pv", cb_test_tmpdir());
    int rc = cb_test_shell(out, sizeof out, "mkdir -p %s && %s run data/scenes/drape_sphere.yaml --solver explicit "
                           "-o %s/run.h5 -q --set duration=0.3 --set cloth.grid.nx=9 --set cloth.grid.ny=7",
                           dir, cb_test_program(), dir);
    if (rc) {
        fprintf(stderr, "%s\n", out);
        return rc;
    }
    char path[1100];
    snprintf(path, sizeof path, "%s/run.h5", dir);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return -1;
    hsize_t d[3];
    hid_t ds = H5Dopen(f, "/frames/positions", H5P_DEFAULT), sp = H5Dget_space(ds);
    H5Sget_simple_extent_dims(sp, d, NULL);
    *frames = (long)d[0];
    *nv = (long)d[1];
    H5Sclose(sp);
    H5Dclose(ds);
    ds = H5Dopen(f, "/mesh/faces", H5P_DEFAULT);
    sp = H5Dget_space(ds);
    H5Sget_simple_extent_dims(sp, d, NULL);
    *nf = (long)d[0];
    H5Sclose(sp);
    H5Dclose(ds);
    H5Fclose(f);
    return 0;
}

static void test_readers_open_the_sidecar(void)
{
    if (!have_pvpython()) {
        if (in_ci()) CU_FAIL("pvpython not found: experiments/install-deps.sh installs python3-paraview");
        printf("\n  skipped: no pvpython (apt install python3-paraview); CI fails here\n");
        return;
    }
    char dir[1024], cwd[1024];
    long nv = 0, nf = 0, frames = 0;
    CU_ASSERT_EQUAL_FATAL(make_run(dir, sizeof dir, &nv, &nf, &frames), 0);
    CU_ASSERT_FATAL(nv == 63 && nf == 96 && frames > 10);
    CU_ASSERT_FATAL(getcwd(cwd, sizeof cwd) != NULL);
    /* VTK draws through X in Debian's ParaView: give it a display when there is none */
    const char *x = getenv("DISPLAY") ? "" : "xvfb-run -a ";
    const char *readers[] = {"xdmf3s", "xdmf3t", "legacy"};
    for (int r = 0; r < 3; r++)
        for (int rel = 0; rel < 2; rel++) {
            int rc = rel ? cb_test_shell(out, sizeof out, "cd %s && %spvpython %s/tests/paraview_check.py ./run.xdmf "
                                         "./run.h5 %s 2>&1", dir, x, cwd, readers[r])
                         : cb_test_shell(out, sizeof out, "%spvpython tests/paraview_check.py %s/run.xdmf %s/run.h5 "
                                         "%s 2>&1", x, dir, dir, readers[r]);
            const char *line = strstr(out, "points ");
            long p = -1, c = -1, s = -1;
            double diff = -1;
            if (line) sscanf(line, "points %ld cells %ld steps %ld maxdiff %lf", &p, &c, &s, &diff);
            if (rc || p != nv || c != nf || s != frames || diff != 0.0)
                fprintf(stderr, "  %s (%s path): %s\n", readers[r], rel ? "relative" : "absolute", out);
            CU_ASSERT_EQUAL(rc, 0);
            CU_ASSERT_EQUAL(p, nv);
            CU_ASSERT_EQUAL(c, nf);
            CU_ASSERT_EQUAL(s, frames);
            CU_ASSERT_EQUAL(diff, 0.0);
        }
}

CB_TEST_MAIN("paraview",
             CB_TEST(test_readers_open_the_sidecar))
