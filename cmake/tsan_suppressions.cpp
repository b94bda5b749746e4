// ThreadSanitizer's suppressions for the RSTORM_TSAN build, linked into
// every target: the runtime asks for them through this hook at start-up, so
// a TSan run needs no TSAN_OPTIONS. Each names a race TSan reports only
// because the code that synchronises it was not built with TSan.
extern "C" const char* __tsan_default_suppressions() {
  return
      // Debian's RocksDB is not built with TSan: an iterator reading the
      // memtable beside a write (which RocksDB allows, through its skiplist's
      // atomics) is reported as a race inside librocksdb (an asynchronous
      // checkpoint's iterator against a put).
      "race:librocksdb.so\n";
}
