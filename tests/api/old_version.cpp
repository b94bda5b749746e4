// A library that claims to be built against an older API version: the loader
// must refuse it before calling anything else in it.
extern "C" __attribute__((visibility("default"))) int rstorm_topology_api_version() { return 0; }
extern "C" __attribute__((visibility("default"))) const char* rstorm_topology_name() {
  return "old";
}
extern "C" __attribute__((visibility("default"))) void rstorm_topology_build(const void*, void*) {
  __builtin_trap();
}
