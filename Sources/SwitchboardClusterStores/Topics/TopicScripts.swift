import SwitchboardCluster
import SwitchboardRedis

/// The Lua scripts of `RedisTopicStore`, one per atomic operation on what every node must agree
/// on: who is in a stream channel (and so the users-per-channel limit) and who publishes in
/// which topic.
///
/// Per channel (the tag of `TopicKeys`, `sb:t:{tag}:…`): `m`, a hash of the members (`node:session`
/// → MessagePack `[user, [topic, meta, …]]`, the topics it publishes in, by name); `p`, a hash of
/// the publishers (`topic\nuser` → `[node:session, meta, number]`, the number of the change that
/// made it one, so publishers list in join order); `seq`, the number of the channel's last change
/// (kept a day once the channel is empty, so numbers are not reused while a node may still hold
/// one). `sb:t:sessions` (scores 0, read by prefix) indexes `id\ntag` for each membership, so a
/// node's sessions can be ended in one step.
///
/// A change the other members are told of bumps `seq` and is published on `sb:t:{tag}:events` as
/// a MessagePack array `[1, tag, seq, type, id, user, [topic, meta, …]]` (type 2 remoteJoinTopic,
/// 3 remoteLeaveTopic; `id` the session that made it). Topic messages go out on the same channel
/// from the store's connection (`[2, …]`, `RedisTopicStore.relay`), so one subscription per node
/// and stream channel carries both.
enum TopicScripts {
    /// ARGV: tag, id, user, most users. `{1, publishers}` (`listed`), or `{0, 'full'}` when the
    /// channel has its most users. An entry the id left behind (a failed leave) leaves first.
    static let join = RedisScript(
        prelude + """
            local tag, id, user, most = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
            leaveChannel(tag, id)
            if redis.call('HLEN', key(tag, 'm')) >= most then return {0, 'full'} end
            saveMember(tag, id, {user = user, topics = {}})
            redis.call('ZADD', sessions, 0, id .. '\\n' .. tag)
            redis.call('PERSIST', key(tag, 'seq'))
            return {1, listed(tag)}
            """)

    /// ARGV: for each membership to write back, 4 arguments: tag, id, user, the topics it
    /// publishes in (MessagePack `[topic, meta, …]` by topic). Each membership Redis no longer
    /// holds (it restarted with nothing kept) is written again, its topics' join told to the
    /// members. The number of memberships written back.
    static let restore = RedisScript(
        prelude + """
            local restored = 0
            for i = 1, #ARGV, 4 do
              local tag, id, user = ARGV[i], ARGV[i + 1], ARGV[i + 2]
              if not loadMember(tag, id) then
                local topics = cmsgpack.unpack(ARGV[i + 3])
                saveMember(tag, id, {user = user, topics = topics})
                redis.call('ZADD', sessions, 0, id .. '\\n' .. tag)
                redis.call('PERSIST', key(tag, 'seq'))
                if #topics > 0 then
                  local seq = announce(tag, 2, id, user, topics)
                  for k = 1, #topics, 2 do
                    redis.call('HSET', key(tag, 'p'), topics[k] .. '\\n' .. user, cmsgpack.pack({id, topics[k + 1], seq}))
                  end
                end
                restored = restored + 1
              end
            end
            return restored
            """)

    /// ARGV: tag, id. `1` when it was a member (its topics' leave published), else `0`.
    static let leave = RedisScript(
        prelude + """
            if leaveChannel(ARGV[1], ARGV[2]) then return 1 end
            return 0
            """)

    /// ARGV: tag. `{number of the last change, publishers}` (`listed`).
    static let snapshot = RedisScript(
        prelude + """
            local tag = ARGV[1]
            return {tonumber(redis.call('GET', key(tag, 'seq')) or '0'), listed(tag)}
            """)

    /// ARGV: tag, topic. The topic's publishers, in join order.
    static let publishers = RedisScript(
        prelude + """
            local tag, prefix = ARGV[1], ARGV[2] .. '\\n'
            local all = redis.call('HGETALL', key(tag, 'p'))
            local found = {}
            for i = 1, #all, 2 do
              if string.sub(all[i], 1, #prefix) == prefix then
                found[#found + 1] = {string.sub(all[i], #prefix + 1), cmsgpack.unpack(all[i + 1])[3]}
              end
            end
            table.sort(found, function(a, b) return a[2] < b[2] end)
            local users = {}
            for i, entry in ipairs(found) do users[i] = entry[1] end
            return users
            """)

    /// ARGV: tag, id, topic, meta, most topics per member. `{1}`, or `{0, refusal}`: `notMember`,
    /// `duplicate`, `full`.
    static let joinTopic = RedisScript(
        prelude + """
            local tag, id, topic, meta, most = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
            local member = loadMember(tag, id)
            if not member then return {0, 'notMember'} end
            if find(member.topics, topic) then return {0, 'duplicate'} end
            if #member.topics / 2 >= most then return {0, 'full'} end
            member.topics[#member.topics + 1] = topic
            member.topics[#member.topics + 1] = meta
            member.topics = byName(member.topics)
            saveMember(tag, id, member)
            local seq = announce(tag, 2, id, member.user, {topic, meta})
            redis.call('HSET', key(tag, 'p'), topic .. '\\n' .. member.user, cmsgpack.pack({id, meta, seq}))
            return {1}
            """)

    /// ARGV: tag, id, topic. `{1}`, or `{0, refusal}`: `notMember`, `notJoined`.
    static let leaveTopic = RedisScript(
        prelude + """
            local tag, id, topic = ARGV[1], ARGV[2], ARGV[3]
            local member = loadMember(tag, id)
            if not member then return {0, 'notMember'} end
            local at = find(member.topics, topic)
            if not at then return {0, 'notJoined'} end
            local meta = member.topics[at + 1]
            table.remove(member.topics, at)
            table.remove(member.topics, at)
            saveMember(tag, id, member)
            dropPublisher(tag, id, topic, member.user)
            announce(tag, 3, id, member.user, {topic, meta})
            return {1}
            """)

    /// ARGV: a prefix of ids (`node:` for every session of a node, else one session's id), only
    /// the reaped (`1`: sessions of a node marked reaped). Each session leaves every stream
    /// channel, its topics' leave told to the members. The number of memberships ended.
    static let end = RedisScript(
        prelude + DeadNodes.isReapedFunction + """
            local prefix, reaping = ARGV[1], ARGV[2] == '1'
            local ended = 0
            for _, entry in ipairs(redis.call('ZRANGEBYLEX', sessions, '[' .. prefix, '[' .. prefix .. '\\255')) do
              local newline = string.find(entry, '\\n', 1, true)
              local id, tag = string.sub(entry, 1, newline - 1), string.sub(entry, newline + 1)
              if (id == prefix or string.sub(prefix, -1) == ':') and (not reaping or isReaped(id)) then
                if not leaveChannel(tag, id) then redis.call('ZREM', sessions, entry) end
                ended = ended + 1
              end
            end
            return ended
            """)

    /// What every script shares: the names, a member's entry, numbering and publishing a change,
    /// listing the publishers and leaving a channel.
    private static let prelude = """
        local sessions = 'sb:t:sessions'
        local function key(tag, what) return 'sb:t:{' .. tag .. '}:' .. what end

        local function loadMember(tag, id)
          local raw = redis.call('HGET', key(tag, 'm'), id)
          if not raw then return nil end
          local fields = cmsgpack.unpack(raw)
          return {user = fields[1], topics = fields[2] or {}}
        end
        local function saveMember(tag, id, member)
          redis.call('HSET', key(tag, 'm'), id, cmsgpack.pack({member.user, member.topics}))
        end
        -- The index of `topic` in a flat topic, meta, … list; nil when absent.
        local function find(topics, topic)
          for i = 1, #topics, 2 do
            if topics[i] == topic then return i end
          end
          return nil
        end
        -- A flat topic, meta, … list sorted by topic.
        local function byName(topics)
          local entries = {}
          for i = 1, #topics, 2 do entries[#entries + 1] = {topics[i], topics[i + 1]} end
          table.sort(entries, function(a, b) return a[1] < b[1] end)
          local out = {}
          for _, pair in ipairs(entries) do
            out[#out + 1] = pair[1]
            out[#out + 1] = pair[2]
          end
          return out
        end

        local function announce(tag, kind, id, user, topics)
          local seq = redis.call('INCR', key(tag, 'seq'))
          redis.call('PUBLISH', key(tag, 'events'), cmsgpack.pack({1, tag, seq, kind, id, user, topics}))
          return seq
        end

        -- Every publisher as topic, user, meta, number, …
        local function listed(tag)
          local all = redis.call('HGETALL', key(tag, 'p'))
          local out = {}
          for i = 1, #all, 2 do
            local newline = string.find(all[i], '\\n', 1, true)
            local entry = cmsgpack.unpack(all[i + 1])
            out[#out + 1] = string.sub(all[i], 1, newline - 1)
            out[#out + 1] = string.sub(all[i], newline + 1)
            out[#out + 1] = entry[2]
            out[#out + 1] = entry[3]
          end
          return out
        end

        -- The user's publisher entry of `topic` goes if it is `id`'s (not a newer session's).
        local function dropPublisher(tag, id, topic, user)
          local field = topic .. '\\n' .. user
          local raw = redis.call('HGET', key(tag, 'p'), field)
          if raw and cmsgpack.unpack(raw)[1] == id then redis.call('HDEL', key(tag, 'p'), field) end
        end

        -- `id` leaves the channel of `tag`, its topics' leave told; its entry, or nil when it was
        -- not a member.
        local function leaveChannel(tag, id)
          local member = loadMember(tag, id)
          if not member then return nil end
          redis.call('HDEL', key(tag, 'm'), id)
          redis.call('ZREM', sessions, id .. '\\n' .. tag)
          for i = 1, #member.topics, 2 do dropPublisher(tag, id, member.topics[i], member.user) end
          if #member.topics > 0 then announce(tag, 3, id, member.user, member.topics) end
          if redis.call('EXISTS', key(tag, 'm')) == 0 then redis.call('PEXPIRE', key(tag, 'seq'), 86400000) end
          return member
        end

        """
}
