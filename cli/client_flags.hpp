// The flags every command that talks to nimbus takes, as Storm's client does:
// `-c key=value` (repeatable) over `--config rstorm.yaml` over the defaults, and
// `--json` on the read commands.
#pragma once

#include <CLI/CLI.hpp>

#include "nimbus/cli_support.hpp"

namespace rstorm::cli {

enum class JsonFlag { kNone, kOffered };

inline void add_client_flags(CLI::App* sub, nimbus::ClientFlags& flags,
                             JsonFlag json = JsonFlag::kNone) {
  sub->add_option("-c", flags.overrides, "key=value config override (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--config", flags.config_file, "an rstorm.yaml");
  if (json == JsonFlag::kOffered) sub->add_flag("--json", flags.json, "print JSON");
}

}  // namespace rstorm::cli
