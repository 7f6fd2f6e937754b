#!/usr/bin/env bash
# Installs what clothbench needs on Debian 12 (only the packages that are missing).
# Run as root, or with sudo available.
set -euo pipefail
pkgs=(build-essential meson ninja-build pkg-config
      libsuitesparse-dev libopenblas-dev libhdf5-dev libcunit1-dev libyaml-dev
      hdf5-tools libxml2-utils python3 python3-numpy python3-h5py python3-matplotlib python3-yaml
      texlive-latex-base texlive-latex-recommended xvfb python3-paraview
      slurmctld slurmd slurm-client munge clang libclang-rt-14-dev)
# texlive-latex-base (pdflatex, geometry) and texlive-latex-recommended (booktabs): the
# test that compiles compare.py's table.tex; about 48 MB of downloads on a fresh machine.
# python3-paraview: pvpython, for the test that opens a run's XDMF sidecar with ParaView's
# own readers, and the VTK Python modules (vtkmodules 9.2) analysis/render.py renders with;
# it pulls in paraview: the largest of the list (113 packages, about 550 MB installed, a few
# minutes to install). Not python3-vtk9: it conflicts with python3-paraview (installing one
# removes the other). xvfb: Debian's VTK draws through X; xvfb-run gives it a display.
# slurmctld, slurmd, slurm-client, munge: tests/test_slurm.c runs a sweep on a throwaway
# single-node cluster (tests/slurm_cluster.sh starts and stops the daemons by hand).
# clang, libclang-rt-14-dev (libFuzzer): tests/fuzz/run.sh, the fuzzers the test command runs.
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
