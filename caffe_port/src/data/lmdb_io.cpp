// LMDB of Caffe Datum records through liblmdb: a sequential reader with wrap-around
// and a writer (convert_mnist). Keys are "%08d" record numbers, as Caffe writes them.
// The reader checks the file's page structure (lmdb_check.hpp) before liblmdb maps
// it, so a corrupt or truncated database is an Error naming data.mdb, never a signal.
// The writer is atomic: a database appears under its name whole or not at all.
#include <lmdb.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstdio>
#include <optional>

#include "taihu/arch/atomic_file.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/caffe/data_sources.hpp"
#include "lmdb_check.hpp"

namespace taihu::caffe {
namespace {

void check(int rc, const std::string& path, const char* what) {
  if (rc != MDB_SUCCESS) throw Error(path + ": LMDB " + what + " failed: " + mdb_strerror(rc));
}

// liblmdb read the meta pages again in mdb_env_open: they must still say what
// check_lmdb_file verified, or the file changed in between.
void check_same_layout(MDB_env* env, const LmdbLayout& layout, const std::string& data_file) {
  MDB_envinfo info{};
  MDB_stat st{};
  check(mdb_env_info(env, &info), data_file, "env_info");
  check(mdb_env_stat(env, &st), data_file, "env_stat");
  if (info.me_last_pgno != layout.last_page || st.ms_psize != layout.page_size || st.ms_entries != layout.entries) {
    throw Error(data_file + ": LMDB file changed while being opened (another process writing it?)");
  }
}

// liblmdb turns a short pwrite (how a full disk shows on the first write that does not
// fit) into EIO; the file system's free space tells the OS's real reason.
int short_write_reason(int rc, const std::string& dir) {
  struct statvfs fs {};
  if (rc == EIO && ::statvfs(dir.c_str(), &fs) == 0 && fs.f_bavail == 0) return ENOSPC;
  return rc;
}

}  // namespace

struct LmdbReader::Impl {
  std::string path;
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  MDB_cursor* cursor = nullptr;
  std::size_t position = 0;  // the record the cursor is on
  ~Impl() {
    if (cursor) mdb_cursor_close(cursor);
    if (txn) mdb_txn_abort(txn);
    if (env) mdb_env_close(env);
  }
};

LmdbReader::LmdbReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(path + ": no such LMDB database (data_param.source)");
  check(mdb_env_create(&impl_->env), path, "env_create");
  check(mdb_env_set_mapsize(impl_->env, std::size_t{1} << 40), path, "set_mapsize");
  const std::string data_file = S_ISDIR(st.st_mode) ? path + "/data.mdb" : path;
  // liblmdb faults on a corrupt page instead of failing: check the structure first.
  const LmdbLayout layout = check_lmdb_file(data_file);
  const unsigned flags = MDB_RDONLY | MDB_NOTLS | MDB_NOLOCK | (S_ISDIR(st.st_mode) ? 0u : unsigned{MDB_NOSUBDIR});
  check(mdb_env_open(impl_->env, path.c_str(), flags, 0664), path, "open");
  check_same_layout(impl_->env, layout, data_file);
  check(mdb_txn_begin(impl_->env, nullptr, MDB_RDONLY, &impl_->txn), path, "txn_begin");
  check(mdb_dbi_open(impl_->txn, nullptr, 0, &impl_->dbi), path, "dbi_open");
  MDB_stat ms{};
  check(mdb_stat(impl_->txn, impl_->dbi, &ms), path, "stat");
  entries_ = ms.ms_entries;
  if (entries_ == 0) throw Error(path + ": LMDB database is empty");
  check(mdb_cursor_open(impl_->txn, impl_->dbi, &impl_->cursor), path, "cursor_open");
  MDB_val k, v;
  check(mdb_cursor_get(impl_->cursor, &k, &v, MDB_FIRST), path, "first");
}

LmdbReader::~LmdbReader() = default;

proto::Datum LmdbReader::read(std::size_t position) {
  position %= entries_;
  MDB_val k, v;
  if (position != impl_->position) {
    if (position == impl_->position + 1) {
      check(mdb_cursor_get(impl_->cursor, &k, &v, MDB_NEXT), impl_->path, "next");
    } else {
      check(mdb_cursor_get(impl_->cursor, &k, &v, MDB_FIRST), impl_->path, "first");
      for (std::size_t i = 0; i < position; ++i) check(mdb_cursor_get(impl_->cursor, &k, &v, MDB_NEXT), impl_->path, "next");
    }
    impl_->position = position;
  }
  check(mdb_cursor_get(impl_->cursor, &k, &v, MDB_GET_CURRENT), impl_->path, "get");
  proto::Datum d;
  if (!d.ParseFromArray(v.mv_data, static_cast<int>(v.mv_size))) {
    throw Error(impl_->path + ": record " + std::to_string(position) + " is not a valid Datum (corrupt database?)");
  }
  if (d.encoded()) throw Error(impl_->path + ": encoded (JPEG/PNG) Datums are not supported");
  return d;
}

// The database is built in a temporary directory beside the target (AtomicTempPath:
// "<path>.tmp.<pid>") and renamed into place by commit(), so a failed or interrupted
// conversion never leaves a partial database under the final name; until then the
// temporary directory is removed when the writer goes (after liblmdb has closed it).
struct LmdbWriter::Impl {
  std::string path;
  std::optional<AtomicTempPath> temp;  // the directory being written
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  ~Impl() {
    if (txn) mdb_txn_abort(txn);
    if (env) mdb_env_close(env);
  }
};

LmdbWriter::LmdbWriter(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) throw Error(path + ": already exists (remove it first)");
  impl_->temp.emplace(path, AtomicTempPath::Kind::directory);
  const std::string& temp = impl_->temp->temp_path();
  check(mdb_env_create(&impl_->env), path, "env_create");
  check(mdb_env_set_mapsize(impl_->env, std::size_t{1} << 36), path, "set_mapsize");
  // No lock file: the directory is this process's alone until the rename, and liblmdb
  // maps lock.mdb, which faults (SIGBUS) instead of failing when the disk is full.
  check(short_write_reason(mdb_env_open(impl_->env, temp.c_str(), MDB_NOLOCK, 0664), temp), path, "open");
  check(mdb_txn_begin(impl_->env, nullptr, 0, &impl_->txn), path, "txn_begin");
  check(mdb_dbi_open(impl_->txn, nullptr, 0, &impl_->dbi), path, "dbi_open");
}

LmdbWriter::~LmdbWriter() = default;

void LmdbWriter::put(const std::string& key, const proto::Datum& datum) {
  if (!impl_->txn) throw Error(impl_->path + ": LMDB put after commit");
  std::string value;
  datum.SerializeToString(&value);
  MDB_val k{key.size(), const_cast<char*>(key.data())};
  MDB_val v{value.size(), value.data()};
  check(mdb_put(impl_->txn, impl_->dbi, &k, &v, 0), impl_->path, "put");
}

void LmdbWriter::commit() {
  if (!impl_->txn) throw Error(impl_->path + ": LMDB commit twice");
  // mdb_txn_commit frees the transaction whether or not it succeeds.
  MDB_txn* txn = impl_->txn;
  impl_->txn = nullptr;
  check(short_write_reason(mdb_txn_commit(txn), impl_->temp->temp_path()), impl_->path, "commit");
  mdb_env_close(impl_->env);  // the commit synced data.mdb; nothing is pending
  impl_->env = nullptr;
  impl_->temp->commit();  // the rename; a directory is not fsync'ed again
}

void write_lmdb(const ImageSet& set, std::size_t first, std::size_t count, const std::string& db_path) {
  if (first + count > set.count()) {
    throw Error(db_path + ": records [" + std::to_string(first) + ", " + std::to_string(first + count) +
                ") exceed the " + std::to_string(set.count()) + " available");
  }
  LmdbWriter w(db_path);
  const std::size_t sz = set.image_size();
  for (std::size_t i = 0; i < count; ++i) {
    proto::Datum d;
    d.set_channels(set.channels);
    d.set_height(set.height);
    d.set_width(set.width);
    d.set_label(set.labels[first + i]);
    d.set_data(reinterpret_cast<const char*>(set.pixels.data() + (first + i) * sz), sz);
    char key[32];
    std::snprintf(key, sizeof key, "%08zu", i);
    w.put(key, d);
  }
  w.commit();
}

}  // namespace taihu::caffe
