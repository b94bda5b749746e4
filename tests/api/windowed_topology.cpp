// A topology library with a windowed bolt, for the checks made against the
// submitted config (LoadedTopology::build): its window is 20 s long and slides
// by `test.slide.ms` (default 5 s), so it fits the default 30 s message timeout
// until the slide or the timeout changes.
#include <rstorm/rstorm.hpp>

namespace {
class TimeSpout : public rstorm::Spout {
 public:
  void open(const rstorm::Config&, const rstorm::TopologyContext&,
            rstorm::SpoutOutputCollector&) override {}
  void next_tuple() override {}
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"n", "ts"});
  }
};

class Summer : public rstorm::WindowedBolt {
 public:
  void execute(const rstorm::TupleWindow&) override {}
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"sum"});
  }
};
}  // namespace

RSTORM_TOPOLOGY(windowed) {
  rstorm::TopologyBuilder b;
  b.set_spout("numbers", [] { return std::make_unique<TimeSpout>(); },
              static_cast<int>(config.get_int("test.spouts", 1)));
  // With `test.count.window` > 0, a bolt with a tumbling count window of
  // that many tuples on `test.count.tasks` tasks too.
  if (const auto n = config.get_int("test.count.window", 0); n > 0) {
    b.set_bolt("counted", [] { return std::make_unique<Summer>(); },
               static_cast<int>(config.get_int("test.count.tasks", 1)))
        .shuffle_grouping("numbers")
        .with_tumbling_window(rstorm::Count(static_cast<int>(n)));
  }
  b.set_bolt("sum", [] { return std::make_unique<Summer>(); })
      .shuffle_grouping("numbers")
      .with_window(rstorm::Duration(20'000),
                   rstorm::Duration(config.get_int("test.slide.ms", 5000)))
      .with_timestamp_field("ts");
  return b.build();
}
