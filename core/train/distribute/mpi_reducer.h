#pragma once
// Gradients all-reduced over MPI between processes (`mpirun -np N sluice run ...`), after the
// in-process sum of each process's replicas. Built only with SLUICE_HAVE_MPI.

#include "train/distribute/gradient_reducer.h"

#include <memory>
#include <string>

namespace sluice::train {

// True when this process was started by an MPI launcher (mpirun / mpiexec / srun with PMI).
bool launchedByMpi();

// Initialises MPI (once) and returns a reducer over MPI_COMM_WORLD; an error when Sluice was
// built without MPI or initialisation fails.
Result<std::unique_ptr<GradientReducer>> makeMpiReducer();

// Ends every rank: prints nothing itself (the caller has reported `message`), calls MPI_Abort
// with `code`. No-op when MPI is not initialised.
void abortAllRanks(int code);

// MPI_Finalize if MPI was initialised (at the end of a successful run).
void finalizeMpi();

} // namespace sluice::train
