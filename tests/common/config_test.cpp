// Config's typed getters, merge and the `-c key=value` reader (topology-api/src/config.cpp).
#include <gtest/gtest.h>

#include "rstorm/config.hpp"

namespace rstorm {
namespace {

ConfigValue value_of(std::string_view arg) { return parse_config_override(arg).second; }

TEST(ConfigOverride, ClassifiesScalarsLikeYaml) {
  EXPECT_EQ(value_of("k=4"), ConfigValue(4));
  EXPECT_EQ(value_of("k=-12"), ConfigValue(-12));
  EXPECT_EQ(value_of("k=0x1F"), ConfigValue(31));
  EXPECT_EQ(value_of("k=0.5"), ConfigValue(0.5));
  EXPECT_EQ(value_of("k=1e3"), ConfigValue(1000.0));
  EXPECT_EQ(value_of("k=true"), ConfigValue(true));
  EXPECT_EQ(value_of("k=False"), ConfigValue(false));
  EXPECT_EQ(value_of("k=~"), ConfigValue(nullptr));
  EXPECT_EQ(value_of("k=null"), ConfigValue(nullptr));
  EXPECT_EQ(value_of("k="), ConfigValue(nullptr));
  EXPECT_EQ(value_of("k=wc"), ConfigValue("wc"));
  EXPECT_EQ(value_of("k=127.0.0.1"), ConfigValue("127.0.0.1"));
  EXPECT_EQ(value_of("k=inf"), ConfigValue("inf"));
  EXPECT_EQ(value_of("k=\"4\""), ConfigValue("4"));
  EXPECT_EQ(value_of("k='it''s'"), ConfigValue("it's"));
  EXPECT_EQ(value_of("k=a=b"), ConfigValue("a=b"));
}

TEST(ConfigOverride, KeyIsTrimmed) {
  auto [key, value] = parse_config_override(" topology.workers = 4 ");
  EXPECT_EQ(key, "topology.workers");
  EXPECT_EQ(value, ConfigValue(4));
}

TEST(ConfigOverride, ReadsFlowLists) {
  EXPECT_EQ(value_of("k=[6700, 6701]"), ConfigValue(ConfigValue::List{6700, 6701}));
  EXPECT_EQ(value_of("k=[]"), ConfigValue(ConfigValue::List{}));
  EXPECT_EQ(value_of("k=[a, \"b, c\", [1, 2.5]]"),
            ConfigValue(ConfigValue::List{"a", "b, c", ConfigValue::List{1, 2.5}}));
}

TEST(ConfigOverride, MissingEqualsSignNamesTheArgument) {
  try {
    (void)parse_config_override("topology.workers");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'topology.workers' has no '='"), std::string::npos)
        << e.what();
  }
}

TEST(ConfigOverride, EmptyKeyIsRejected) {
  EXPECT_THROW((void)parse_config_override("=4"), ConfigError);
}

TEST(ConfigOverride, UnbalancedListIsRejected) {
  EXPECT_THROW((void)parse_config_override("k=[a, [b]"), ConfigError);
  EXPECT_THROW((void)parse_config_override("k=[a, , b]"), ConfigError);
  EXPECT_THROW((void)parse_config_override("k=[1, 2"), ConfigError);
  EXPECT_THROW((void)parse_config_override("k=\"open"), ConfigError);
}

TEST(ConfigOverride, IntegerOverflowIsRejected) {
  EXPECT_THROW((void)parse_config_override("k=99999999999999999999"), ConfigError);
  EXPECT_EQ(value_of("k=-9223372036854775808"), ConfigValue(INT64_MIN));
}

TEST(ConfigValue, RendersAsYamlAndReadsBack) {
  ConfigValue list(ConfigValue::List{1, 2.0, "x y", true, nullptr});
  EXPECT_EQ(list.to_string(), "[1, 2.0, \"x y\", true, null]");
  EXPECT_EQ(value_of("k=" + list.to_string()), list);
  EXPECT_EQ(ConfigValue("say \"hi\"").to_string(), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(ConfigValue(0.1).to_string(), "0.1");
}

TEST(ConfigValue, TypeNames) {
  EXPECT_EQ(ConfigValue().type_name(), "null");
  EXPECT_EQ(ConfigValue(true).type_name(), "bool");
  EXPECT_EQ(ConfigValue(1).type_name(), "integer");
  EXPECT_EQ(ConfigValue(1.5).type_name(), "number");
  EXPECT_EQ(ConfigValue("s").type_name(), "string");
  EXPECT_EQ(ConfigValue(ConfigValue::List{}).type_name(), "list");
}

TEST(Config, TypedGettersReturnValues) {
  Config c;
  c.set("topology.workers", 4);
  c.set("topology.debug", true);
  c.set("onheap", 256.5);
  c.set("name", "wc");
  c.set("ports", ConfigValue::List{6700, 6701});
  c.set("servers", ConfigValue::List{"a", "b"});
  EXPECT_EQ(c.get_int("topology.workers"), 4);
  EXPECT_TRUE(c.get_bool("topology.debug"));
  EXPECT_EQ(c.get_double("onheap"), 256.5);
  EXPECT_EQ(c.get_double("topology.workers"), 4.0);  // an integer is a number
  EXPECT_EQ(c.get_string("name"), "wc");
  EXPECT_EQ(c.get_int_list("ports"), (std::vector<std::int64_t>{6700, 6701}));
  EXPECT_EQ(c.get_string_list("servers"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c.get_int("absent", 7), 7);
  EXPECT_EQ(c.get_string("absent", "x"), "x");
  EXPECT_FALSE(c.get_bool("absent", false));
  EXPECT_EQ(c.get_double("absent", 1.5), 1.5);
}

TEST(Config, WrongTypeNamesKeyOriginFoundAndExpected) {
  Config c;
  c.set("topology.workers", "four", "/etc/rstorm.yaml");
  try {
    (void)c.get_int("topology.workers");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "config key 'topology.workers' (from /etc/rstorm.yaml) is a string (\"four\"), "
                 "expected an integer");
  }
  // The fallback overload does not hide a wrong type.
  EXPECT_THROW((void)c.get_int("topology.workers", 1), ConfigError);
}

TEST(Config, WrongListElementNamesItsIndex) {
  Config c;
  c.set("supervisor.slots.ports", ConfigValue::List{6700, "x"}, "command line");
  try {
    (void)c.get_int_list("supervisor.slots.ports");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "config key 'supervisor.slots.ports' (from command line) has element 1 that is "
                 "a string (\"x\"), expected an integer");
  }
}

TEST(Config, MissingKeyWithoutFallbackIsAnError) {
  Config c;
  try {
    (void)c.get_string("nimbus.seeds");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "config key 'nimbus.seeds' is not set");
  }
}

TEST(Config, NullValueIsReportedAsNull) {
  Config c;
  c.set("topology.max.spout.pending", nullptr, "defaults.yaml:3");
  try {
    (void)c.get_int("topology.max.spout.pending");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "config key 'topology.max.spout.pending' (from defaults.yaml:3) is null, "
                 "expected an integer");
  }
}

TEST(Config, MergeLaterLayerWinsAndKeepsItsOrigin) {
  Config base;
  base.set("a", 1, "defaults");
  base.set("b", 2, "defaults");
  Config top;
  top.set("b", 3, "command line");
  top.set("c", 4, "command line");
  base.merge(top);
  EXPECT_EQ(base.get_int("a"), 1);
  EXPECT_EQ(base.get_int("b"), 3);
  EXPECT_EQ(base.find("b")->origin, "command line");
  EXPECT_EQ(base.get_int("c"), 4);
  base.erase("a");
  EXPECT_FALSE(base.contains("a"));
  EXPECT_EQ(base.find("a"), nullptr);
}

}  // namespace
}  // namespace rstorm
