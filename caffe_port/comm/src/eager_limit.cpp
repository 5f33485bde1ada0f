// btl_tcp_eager_limit from the MPI tool interface (MPI_T): the control variable is
// registered by Open MPI's TCP transport when that component is opened (any job whose
// btl list includes tcp); elsewhere the documented default applies.
#include "taihu/comm/eager_limit.hpp"

#include <mpi.h>

#include <cstring>

namespace taihu::comm {

namespace {
// Reads control variable `index` as an unsigned value; false when its type is not an integer.
bool read_cvar(int index, unsigned long long& value) {
  char name[256], desc[256];
  int name_len = sizeof(name), desc_len = sizeof(desc), verbosity = 0, bind = 0, scope = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_T_enum enumtype;
  if (MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &type, &enumtype, desc, &desc_len, &bind, &scope) !=
      MPI_SUCCESS)
    return false;
  MPI_T_cvar_handle handle;
  int count = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) != MPI_SUCCESS) return false;
  bool ok = count == 1;
  if (ok) {
    if (type == MPI_UNSIGNED_LONG) {
      unsigned long v = 0;
      ok = MPI_T_cvar_read(handle, &v) == MPI_SUCCESS;
      value = v;
    } else if (type == MPI_UNSIGNED_LONG_LONG) {
      unsigned long long v = 0;
      ok = MPI_T_cvar_read(handle, &v) == MPI_SUCCESS;
      value = v;
    } else if (type == MPI_UNSIGNED || type == MPI_INT) {
      int v = 0;  // same size; a negative limit is rejected below
      ok = MPI_T_cvar_read(handle, &v) == MPI_SUCCESS && v >= 0;
      value = static_cast<unsigned long long>(v);
    } else {
      ok = false;
    }
  }
  MPI_T_cvar_handle_free(&handle);
  return ok;
}
}  // namespace

std::size_t mpi_tcp_eager_limit() {
  // Ask for the level MPI already provides: Open MPI 4.1's MPI_T_init_thread stores the
  // requested level as the library's own (MPI_Query_thread then reports MPI_THREAD_SINGLE
  // in a program that asked MPI_Init_thread for MPI_THREAD_MULTIPLE).
  int level = MPI_THREAD_SINGLE, initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Query_thread(&level);
  int provided = 0;
  if (MPI_T_init_thread(level, &provided) != MPI_SUCCESS) return kDefaultEagerLimit;
  std::size_t limit = kDefaultEagerLimit;
  int index = -1;
#if MPI_VERSION > 3 || (MPI_VERSION == 3 && MPI_SUBVERSION >= 1)
  if (MPI_T_cvar_get_index("btl_tcp_eager_limit", &index) != MPI_SUCCESS) index = -1;
#endif
  unsigned long long v = 0;
  if (index >= 0 && read_cvar(index, v) && v > 0) limit = static_cast<std::size_t>(v);
  MPI_T_finalize();
  return limit;
}

}  // namespace taihu::comm
