// The worker-to-worker data plane (see README.md). Every message on a
// connection is one Frame, Thrift compact protocol, preceded by its length as a
// 4-byte big-endian integer. The encoder in codec.cpp writes these structures
// field by field without building them; tests/transport/codec_test.cpp checks
// that the generated code reads what it writes and the other way round.
// Changing a field id or type here breaks the wire: bump kProtocolVersion.

namespace cpp rstorm.transport.wire

// The sender's first message on a connection it opened.
struct Hello {
  1: string topology_id
  2: string host              // the sender's own listening address
  3: i32 port
  4: i32 protocol_version
  5: optional binary nonce    // with authentication: 32 random bytes of the sender
}

// Authentication (storm.messaging.netty.authentication): the receiver's
// answer to a hello with a nonce. proof = HMAC-SHA256(topology secret,
// "rstorm-data-plane-server" 0 topology_id sender nonce receiver nonce).
struct Challenge {
  1: binary nonce             // 32 random bytes of the receiver
  2: binary proof
}

// The sender's answer to a challenge it verified: HMAC-SHA256(topology
// secret, "rstorm-data-plane-client" 0 topology_id sender nonce receiver nonce).
// The receiver reads nothing else from the sender before a valid proof.
struct Proof {
  1: binary proof
}

struct HelloAck {
  1: i32 protocol_version
}

// The receiver's answer to a hello it does not accept; it then closes.
struct Refused {
  1: string reason
}

struct Null {}

// One rstorm::Value.
union Value {
  1: Null null_value
  2: bool bool_value
  3: i64 int_value
  4: double double_value
  5: string string_value
  6: binary bytes_value
}

// One worker::Envelope. kind is worker::MessageKind (0 tuple, 1 ack init,
// 2 ack, 3 fail, 4 ack complete, 5 ack failed, 6 checkpoint barrier, 7 checkpoint
// part done). A tuple's stream is the
// index of the stream among its source component's plan streams; control
// messages carry no values and their (root, value) as the only anchor, except
// acking messages (kinds 1-5): there each (root, value) anchor is one message,
// of that kind from source_task to dest_task (protocol version 2).
// anchors: the (root, edge) pair of each tuple tree the tuple belongs to,
// flattened: [root0, edge0, root1, edge1, ...]; ids are uint64 bit patterns.
struct Envelope {
  1: i32 dest_task
  2: i8 kind
  3: i32 source_task
  4: i32 stream_index
  5: list<Value> values
  6: list<i64> anchors
}

struct TupleBatch {
  1: list<Envelope> envelopes
}

// Sent by a receiver to a sender: hold (on) or resume (off) sending to these tasks.
// With `state` set, `tasks` is the whole set of the receiver's throttled tasks
// (every other task is released): what receivers send, on every change and again
// every second, so that a sender can never keep a throttle the receiver lifted.
struct Backpressure {
  1: list<i32> tasks
  2: bool on
  3: optional bool state
}

// Sent by a receiver that stops in order (its worker killed, rebalanced away
// or shut down) to each sender before it closes their connection: the close
// that follows is not a failure. Added without a protocol version bump: a
// sender that does not know it reads it only as its peer goes away, where it
// reported the connection lost anyway.
struct Goodbye {
  1: string reason
}

union Frame {
  1: Hello hello
  2: HelloAck hello_ack
  3: Refused refused
  4: TupleBatch tuples
  5: Backpressure backpressure
  6: Challenge challenge
  7: Proof proof
  8: Goodbye goodbye
}
