#ifndef LOGSTORE_DIRECTORY_EXCHANGE_H
#define LOGSTORE_DIRECTORY_EXCHANGE_H

/// Swaps the names `first` and `second` (two existing paths on one file system) in one atomic step:
/// `renameat2(RENAME_EXCHANGE)` on Linux (3.15 and later; ext4, XFS, Btrfs, tmpfs), `renamex_np(RENAME_SWAP)`
/// on Apple platforms. Returns 0, or -1 with `errno` set (`EINVAL` or `ENOSYS` where the file system or
/// kernel cannot).
int logstore_exchange_paths(const char *first, const char *second);

#endif
