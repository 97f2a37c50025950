//! The control channel's keys and Lua scripts.
//!
//! Every control key is `<prefix>control{ctl}:<name>`: one hash tag, so a
//! cluster keeps them in one slot (one script may touch them all), and a
//! name the request path's keys (`<prefix>{<subject>}...`) never match, so
//! an ACL can tell them apart (see the guide's "Running a fleet"). The
//! operator's own key, the CSRF secret, is `<prefix>operator{ctl}:csrf`
//! (the same slot): outside the `control{ctl}:` names the followers may
//! read.

/// The names of the control keys under one prefix.
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    /// The published set: a hash (version, schema, json, note, at_ms,
    /// annotations, epoch).
    pub(crate) set: String,
    /// The last versions, newest first: a list of JSON entries.
    pub(crate) history: String,
    /// The switches: a hash of name to "1" or "0".
    pub(crate) switches: String,
    /// The lifts, newest first: a list of "seq rule subject-hex".
    pub(crate) lifts: String,
    /// The last lift's sequence number.
    pub(crate) lift_seq: String,
    /// The rules added at run time: a string of JSON (`temporary.rs`).
    pub(crate) temporary: String,
    /// A random stamp of their last change, which followers poll.
    pub(crate) temporary_stamp: String,
    /// The fleet's CSRF secret (64 hex digits), under `operator{ctl}:`,
    /// which only the operator may read.
    pub(crate) csrf: String,
    /// The registry's index: a sorted set of instance ids by report time.
    pub(crate) instances: String,
    /// The prefix of each instance's report (`<this><id>`).
    pub(crate) instance: String,
    /// The pub/sub channel of change notices.
    pub(crate) channel: String,
}

impl Keys {
    pub(crate) fn new(prefix: &str) -> Self {
        let k = |name: &str| format!("{prefix}control{{ctl}}:{name}");
        Keys {
            set: k("set"),
            history: k("history"),
            switches: k("switches"),
            lifts: k("lifts"),
            lift_seq: k("lift_seq"),
            temporary: k("temporary"),
            temporary_stamp: k("temporary_stamp"),
            csrf: format!("{prefix}operator{{ctl}}:csrf"),
            instances: k("instances"),
            instance: k("instance:"),
            channel: k("notice"),
        }
    }
}

/// The largest version: the publish script counts in Lua numbers
/// (doubles), exact up to 2^53.
pub(crate) const MAX_VERSION: u64 = (1 << 53) - 1;

/// Lifts kept for instances that were away (newest first).
pub(crate) const LIFTS_KEPT: usize = 1000;

/// KEYS: set, history. ARGV: expected version, schema, json, note,
/// annotations (JSON object), a new epoch, history length, channel.
/// Compare-and-set on the version: returns {1, version} when published,
/// {0, current} when the version moved, an error when the stored version
/// is not a number, and a `CONTROLKEY` error naming the key when a key
/// holds another type than its own.
///
/// All or nothing: a script that fails part-way keeps what it wrote, so
/// every check (the keys' types, the version) comes before the first
/// write, and the set, which followers apply, is written last.
pub(crate) const PUBLISH: &str = r"
assert(#KEYS == 2 and #ARGV == 8, 'publish expects 2 keys and 8 arguments')
local want = {{KEYS[1], 'hash', 'the published set'},
  {KEYS[2], 'list', 'the published versions, newest first'}}
for _, w in ipairs(want) do
  local t = redis.call('TYPE', w[1])['ok']
  if t ~= 'none' and t ~= w[2] then
    return redis.error_reply('CONTROLKEY the control key ' .. w[1] .. ' holds a ' .. t ..
      ' where it should hold a ' .. w[2] .. ' (' .. w[3] .. ')')
  end
end
local stored = redis.call('HGET', KEYS[1], 'version')
local cur = 0
if stored then
  cur = tonumber(stored)
  if cur == nil or cur < 0 or cur ~= math.floor(cur) or cur >= 9007199254740991 then
    return redis.error_reply('the stored version is not a number below 2^53: ' .. string.sub(stored, 1, 40))
  end
end
if cur ~= tonumber(ARGV[1]) then return {0, cur} end
local epoch = redis.call('HGET', KEYS[1], 'epoch')
if not epoch or cur == 0 then epoch = ARGV[6] end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = cur + 1
local entry = cjson.encode({version = v, schema = tonumber(ARGV[2]), json = ARGV[3],
  note = ARGV[4], at_ms = now, annotations = ARGV[5]})
redis.call('LPUSH', KEYS[2], entry)
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[7]) - 1)
redis.call('HSET', KEYS[1], 'version', v, 'schema', ARGV[2], 'json', ARGV[3],
  'note', ARGV[4], 'at_ms', now, 'annotations', ARGV[5], 'epoch', epoch)
redis.call('PUBLISH', ARGV[8], v)
return {1, v}
";

/// KEYS: switches. ARGV: name, "1" or "0", channel. Sets one switch and
/// announces it.
pub(crate) const SWITCH: &str = r"
assert(#KEYS == 1 and #ARGV == 3, 'switch expects 1 key and 3 arguments')
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], 'switch')
return 1
";

/// KEYS: lifts, lift_seq. ARGV: rule, subject hex, kept, channel. Records
/// a lift under the next sequence number and announces it.
pub(crate) const LIFT: &str = r"
assert(#KEYS == 2 and #ARGV == 4, 'lift expects 2 keys and 4 arguments')
local seq = redis.call('INCR', KEYS[2])
redis.call('LPUSH', KEYS[1], seq .. ' ' .. ARGV[1] .. ' ' .. ARGV[2])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[3]) - 1)
redis.call('PUBLISH', ARGV[4], 'lift')
return seq
";

/// KEYS: the csrf key. ARGV: a new secret. Stores it unless one is there;
/// returns the stored one.
pub(crate) const CSRF: &str = r"
assert(#KEYS == 1 and #ARGV == 1, 'csrf expects 1 key and 1 argument')
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])
";

/// KEYS: instances, the instance's report. ARGV: id, report JSON, ttl ms.
/// Writes the report with an expiry and indexes it by Valkey's time;
/// returns how many instances reported within the ttl.
pub(crate) const REPORT: &str = r"
assert(#KEYS == 2 and #ARGV == 3, 'report expects 2 keys and 3 arguments')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ttl)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - ttl))
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return redis.call('ZCARD', KEYS[1])
";

/// KEYS: instances. ARGV: ttl ms. The ids reported within ttl.
pub(crate) const LIVE: &str = r"
assert(#KEYS == 1 and #ARGV == 1, 'live expects 1 key and 1 argument')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], string.format('%d', now - tonumber(ARGV[1])), '+inf')
";
