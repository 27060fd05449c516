import SwitchboardCluster
import SwitchboardRedis

/// The Lua scripts of `RedisPresenceStore`, one per atomic operation: the rules of the in-memory
/// `PresenceTable`, run where every node's operations meet.
///
/// Per channel (the tag of `PresenceKeys`, `sb:p:{tag}:…`): `m`, a hash of the members (`node:session`
/// → MessagePack `[user, features, visible, user's tag]`); `u`, a hash of the users (user →
/// `[sessions, visible sessions, states as key, value, …]`); `r`, the roster, a sorted set of the
/// users who show, scored by the number of the change that showed them (so `whoNow` pages by it);
/// `l`, the set of members that hear presence events; `seq`, the number of the channel's last
/// change (no TTL: numbers, and so page tokens, are never reused, unless Redis restarts with
/// nothing kept). Per user (the user's tag): `in`, the tags of the channels the user shows in;
/// `on`, a hash of the user's sessions (→ the wall-clock millisecond it lost its connection, 0
/// while connected); `seen`, when the user was last online (kept `lastSeenTTL`).
/// `sb:p:sessions` (scores 0, read by prefix) indexes `id\nc\ntag` for each membership and
/// `id\nu\ntag` for each session's user, so a node's sessions can be ended in one step;
/// `sb:p:channels` (scores 0, read by prefix) holds the tag of every channel with a member, so an
/// app's channels can be listed without a scan.
///
/// A session another node took over (`DeadNodes.movedKey`), or one of a node marked reaped, may
/// not join or change a state under its old name (`isGone`).
///
/// A change the other members are told of (a session showing or no longer showing, a state
/// change that shows) bumps `seq` and is published on `sb:p:{tag}:events` as a MessagePack array
/// `[tag, seq, kind, id, user, states, firstOrLast, occupancy]` (kind: 1 joined, 2 left, 3 timed
/// out, 4 state changed; `id` the session that made it, empty for the server). A script builds
/// the names it touches from their tags (a membership touches its channel and its user): fine on
/// one Redis, as the lock scripts' indexes are; a Redis Cluster would need them split by slot.
enum PresenceScripts {
    /// ARGV: tag, user's tag, id, user, features, visible (`1`), hears presence (`1`).
    /// `{features before (-1: none), other visible sessions, occupancy, states}`.
    static let join = RedisScript(
        DeadNodes.isGoneFunction + prelude + """
            local tag, utag, id, user = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
            if isGone(id) then return redis.error_reply('the session ' .. id .. ' is no longer this node\\'s') end
            return joinChannel(tag, utag, id, user, tonumber(ARGV[5]), ARGV[6] == '1', ARGV[7] == '1', {})
            """)

    /// ARGV: for each membership to write back, 8 arguments: tag, user's tag, id, user, features,
    /// visible (`1`), hears presence (`1`), the user's state (MessagePack `[key, value, …]`). Each
    /// membership Redis no longer holds (it restarted with nothing kept) joins again, told to the
    /// members as a join, its user's state kept when the user has no entry left in the channel;
    /// each session's online mark is set again if it is gone. Sessions no longer their node's
    /// (`isGone`) are skipped. The number of memberships written back.
    static let restore = RedisScript(
        DeadNodes.isGoneFunction + prelude + """
            local restored = 0
            for i = 1, #ARGV, 8 do
              local tag, utag, id, user = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
              if not isGone(id) then
                if redis.call('HEXISTS', key(tag, 'm'), id) == 0 then
                  local list, states = cmsgpack.unpack(ARGV[i + 7]), {}
                  for k = 1, #list, 2 do states[list[k]] = list[k + 1] end
                  joinChannel(tag, utag, id, user, tonumber(ARGV[i + 4]), ARGV[i + 5] == '1', ARGV[i + 6] == '1', states)
                  restored = restored + 1
                end
                if redis.call('HEXISTS', key(utag, 'on'), id) == 0 then
                  redis.call('HSET', key(utag, 'on'), id, '0')
                  redis.call('ZADD', sessions, 0, id .. '\\nu\\n' .. utag)
                end
              end
            end
            return restored
            """)

    /// ARGV: tag, id, timed out (`1`). `{1, features, other visible sessions, occupancy, states,
    /// user}` or `{0}` when it was not a member.
    static let leave = RedisScript(
        prelude + """
            local gone = leaveChannel(ARGV[1], ARGV[2], ARGV[3] == '1')
            if not gone then return {0} end
            return {1, gone[1], gone[2], gone[3], gone[4], gone[5]}
            """)

    /// ARGV: tag, id (empty: the server), shows (`1`), most keys, most bytes, user, then key and
    /// value of each item. `{1, changed, states}` or `{0, refusal, number}`.
    static let setState = RedisScript(
        DeadNodes.isGoneFunction + prelude + """
            local tag, id, shows, maxKeys, maxBytes, user = ARGV[1], ARGV[2], ARGV[3] == '1', tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
            if id ~= '' and isGone(id) then return {0, 'notMember', 0} end
            local entry = loadUser(tag, user)
            if not entry then return {0, 'notMember', 0} end
            local changed = false
            for i = 7, #ARGV, 2 do
              if entry.states[ARGV[i]] ~= ARGV[i + 1] then
                entry.states[ARGV[i]] = ARGV[i + 1]
                changed = true
              end
            end
            local count, bytes = 0, 0
            for name, value in pairs(entry.states) do
              count = count + 1
              bytes = bytes + #name + #value
            end
            if count > maxKeys then return {0, 'count', count} end
            if bytes > maxBytes then return {0, 'bytes', bytes} end
            return stateChanged(tag, id, user, entry, changed, shows)
            """)

    /// ARGV: tag, id (empty: the server), shows (`1`), user, then the keys (none: every key).
    /// `{1, changed, states}` or `{0, 'notMember', 0}`.
    static let removeState = RedisScript(
        DeadNodes.isGoneFunction + prelude + """
            local tag, id, shows, user = ARGV[1], ARGV[2], ARGV[3] == '1', ARGV[4]
            if id ~= '' and isGone(id) then return {0, 'notMember', 0} end
            local entry = loadUser(tag, user)
            if not entry then return {0, 'notMember', 0} end
            local before = count(entry.states)
            if #ARGV < 5 then
              entry.states = {}
            else
              for i = 5, #ARGV do entry.states[ARGV[i]] = nil end
            end
            return stateChanged(tag, id, user, entry, count(entry.states) ~= before, shows)
            """)

    /// ARGV: tag, user. `{1, visible, states}` or `{0}`.
    static let state = RedisScript(
        prelude + """
            local entry = loadUser(ARGV[1], ARGV[2])
            if not entry then return {0} end
            return {1, entry.visible > 0 and 1 or 0, flat(entry.states)}
            """)

    /// ARGV: the prefix of an app's channel tags (`app:`). `{tag, members, users, …}`: every
    /// channel of the app with a member on some node, with its memberships and different users.
    static let channelCounts = RedisScript(
        prelude + """
            local prefix = ARGV[1]
            local out = {}
            for _, tag in ipairs(redis.call('ZRANGEBYLEX', channels, '[' .. prefix, '[' .. prefix .. '\\255')) do
              out[#out + 1] = tag
              out[#out + 1] = redis.call('HLEN', key(tag, 'm'))
              out[#out + 1] = redis.call('HLEN', key(tag, 'u'))
            end
            return out
            """)

    /// ARGV: tag, cursor, most users, with states (`1`). `{user, number, states, …}`: the users
    /// after the cursor in join order, one more than asked when there are (its states left out).
    static let members = RedisScript(
        prelude + """
            local tag, cursor, most, withStates = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4] == '1'
            return page(tag, cursor, most + 1, most, withStates)
            """)

    /// ARGV: tag, most users. `{number of the last change, occupancy, {user, number, states, …}}`.
    static let snapshot = RedisScript(
        prelude + """
            local tag, most = ARGV[1], tonumber(ARGV[2])
            return {tonumber(redis.call('GET', key(tag, 'seq')) or '0'), redis.call('ZCARD', key(tag, 'r')), page(tag, '0', most, most, true)}
            """)

    /// ARGV: user's tag, id, sighting (`opened`, `suspended`, `resumed`, `closed`), now, how long
    /// the last-seen time is kept (ms). `1`.
    static let record = RedisScript(
        prelude + """
            local utag, id, sighting, now, keep = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
            local on = key(utag, 'on')
            if sighting == 'opened' or sighting == 'resumed' then
              redis.call('HSET', on, id, '0')
              redis.call('ZADD', sessions, 0, id .. '\\nu\\n' .. utag)
            elseif redis.call('HEXISTS', on, id) == 1 then
              if sighting == 'suspended' then
                redis.call('HSET', on, id, now)
              else
                closeSession(utag, id, now, keep)
              end
            end
            return 1
            """)

    /// ARGV: now, then each user's tag. `{online, last seen, …}` in the order asked.
    static let presence = RedisScript(
        prelude + """
            local now = tonumber(ARGV[1])
            local out = {}
            for i = 2, #ARGV do
              local lost = redis.call('HVALS', key(ARGV[i], 'on'))
              if #lost == 0 then
                out[#out + 1] = 0
                out[#out + 1] = tonumber(redis.call('GET', key(ARGV[i], 'seen')) or '0')
              else
                local connected, last = false, 0
                for _, at in ipairs(lost) do
                  local value = tonumber(at)
                  if value == 0 then connected = true elseif value > last then last = value end
                end
                out[#out + 1] = 1
                out[#out + 1] = connected and now or last
              end
            end
            return out
            """)

    /// ARGV: a prefix of ids (`node:` for every session of a node), now, how long the last-seen
    /// time is kept (ms). Each session leaves every channel as timed out (told to the members)
    /// and goes offline. `{sessions ended, {tag, user, …}}`: the number of sessions ended and
    /// each channel membership ended (the channel's tag and the member's user).
    static let end = RedisScript(
        prelude + """
            local prefix, now, keep = ARGV[1], ARGV[2], ARGV[3]
            local ended, seen, left = 0, {}, {}
            for _, entry in ipairs(redis.call('ZRANGEBYLEX', sessions, '[' .. prefix, '[' .. prefix .. '\\255')) do
              local first = string.find(entry, '\\n', 1, true)
              local id, kind, tag = string.sub(entry, 1, first - 1), string.sub(entry, first + 1, first + 1), string.sub(entry, first + 3)
              if id == prefix or string.sub(prefix, -1) == ':' then
                if not seen[id] then
                  seen[id] = true
                  ended = ended + 1
                end
                if kind == 'c' then
                  local change = leaveChannel(tag, id, true)
                  if change then
                    left[#left + 1] = tag
                    left[#left + 1] = change[5]
                  end
                elseif redis.call('HEXISTS', key(tag, 'on'), id) == 1 then
                  closeSession(tag, id, now, keep)
                else
                  redis.call('ZREM', sessions, entry)
                end
              end
            end
            return {ended, left}
            """)

    /// ARGV: a prefix of ids (`node:` for every session of a dead node), the wall-clock millisecond
    /// of its last beat. Each session still marked connected lost its connection then (as a
    /// suspension does): its user is online until the session ends. `1`.
    static let lose = RedisScript(
        prelude + """
            local prefix, lastBeat = ARGV[1], ARGV[2]
            for _, entry in ipairs(redis.call('ZRANGEBYLEX', sessions, '[' .. prefix, '[' .. prefix .. '\\255')) do
              local first = string.find(entry, '\\n', 1, true)
              local id, kind, tag = string.sub(entry, 1, first - 1), string.sub(entry, first + 1, first + 1), string.sub(entry, first + 3)
              if kind == 'u' and redis.call('HGET', key(tag, 'on'), id) == '0' then redis.call('HSET', key(tag, 'on'), id, lastBeat) end
            end
            return 1
            """)

    /// ARGV: the former id, the new id (a session taken over by another node). Every membership
    /// and online mark of the session moves to the new id, silently. `{tag, features, states, …}`
    /// of its channels (its user's state in each).
    static let takeOver = RedisScript(
        prelude + """
            local old, new = ARGV[1], ARGV[2]
            local found = {}
            for _, entry in ipairs(redis.call('ZRANGEBYLEX', sessions, '[' .. old .. '\\n', '[' .. old .. '\\n\\255')) do
              local kind, tag = string.sub(entry, #old + 2, #old + 2), string.sub(entry, #old + 4)
              redis.call('ZREM', sessions, entry)
              redis.call('ZADD', sessions, 0, new .. '\\n' .. kind .. '\\n' .. tag)
              if kind == 'c' then
                local raw = redis.call('HGET', key(tag, 'm'), old)
                if raw then
                  redis.call('HDEL', key(tag, 'm'), old)
                  redis.call('HSET', key(tag, 'm'), new, raw)
                  if redis.call('SREM', key(tag, 'l'), old) == 1 then redis.call('SADD', key(tag, 'l'), new) end
                  local member = cmsgpack.unpack(raw)
                  local entry = loadUser(tag, member[1])
                  found[#found + 1] = tag
                  found[#found + 1] = member[2]
                  found[#found + 1] = entry and flat(entry.states) or {}
                end
              elseif redis.call('HEXISTS', key(tag, 'on'), old) == 1 then
                redis.call('HDEL', key(tag, 'on'), old)
                redis.call('HSET', key(tag, 'on'), new, '0')
              end
            end
            return found
            """)

    /// What every script shares: the names, a user's entry, numbering and publishing a change,
    /// leaving a channel and going offline.
    private static let prelude = """
        local sessions = 'sb:p:sessions'
        local channels = 'sb:p:channels'
        local function key(tag, what) return 'sb:p:{' .. tag .. '}:' .. what end

        local function count(states)
          local n = 0
          for _ in pairs(states) do n = n + 1 end
          return n
        end
        -- A state as key, value, … sorted by key.
        local function flat(states)
          local names = {}
          for name in pairs(states) do names[#names + 1] = name end
          table.sort(names)
          local out = {}
          for _, name in ipairs(names) do
            out[#out + 1] = name
            out[#out + 1] = states[name]
          end
          return out
        end
        local function loadUser(tag, user)
          local raw = redis.call('HGET', key(tag, 'u'), user)
          if not raw then return nil end
          local fields = cmsgpack.unpack(raw)
          local states = {}
          local list = fields[3] or {}
          for i = 1, #list, 2 do states[list[i]] = list[i + 1] end
          return {sessions = fields[1], visible = fields[2], states = states}
        end
        local function saveUser(tag, user, entry)
          redis.call('HSET', key(tag, 'u'), user, cmsgpack.pack({entry.sessions, entry.visible, flat(entry.states)}))
        end

        local function nextSeq(tag) return redis.call('INCR', key(tag, 'seq')) end
        local function announce(tag, seq, kind, id, user, states, firstOrLast, occupancy)
          redis.call('PUBLISH', key(tag, 'events'),
            cmsgpack.pack({tag, seq, kind, id, user, flat(states), firstOrLast and 1 or 0, occupancy}))
        end

        -- Keeps a changed state, told to the others when it `shows`; `{1, changed, states}`.
        local function stateChanged(tag, id, user, entry, changed, shows)
          if changed then
            saveUser(tag, user, entry)
            if shows then announce(tag, nextSeq(tag), 4, id, user, entry.states, false, redis.call('ZCARD', key(tag, 'r'))) end
          end
          return {1, changed and 1 or 0, flat(entry.states)}
        end

        -- The users of the roster after `cursor`: `most` of them, the first `withStatesOf` with
        -- their states when `withStates`.
        local function page(tag, cursor, most, withStatesOf, withStates)
          local found = redis.call('ZRANGEBYSCORE', key(tag, 'r'), '(' .. cursor, '+inf', 'WITHSCORES', 'LIMIT', 0, most)
          local out = {}
          for i = 1, #found, 2 do
            out[#out + 1] = found[i]
            out[#out + 1] = found[i + 1]
            local states = {}
            if withStates and (i + 1) / 2 <= withStatesOf then
              local entry = loadUser(tag, found[i])
              if entry then states = flat(entry.states) end
            end
            out[#out + 1] = states
          end
          return out
        end

        -- `id`, a session of `user` (of `utag`), joins the channel of `tag` with `features`, or
        -- joins again with new ones; a user new to the channel starts with the state `fresh`.
        -- `{features before (-1: none), other visible sessions, occupancy, states}`.
        local function joinChannel(tag, utag, id, user, features, visible, listens, fresh)
          local raw = redis.call('HGET', key(tag, 'm'), id)
          local before, wasVisible = -1, false
          if raw then
            local member = cmsgpack.unpack(raw)
            before, wasVisible = member[2], member[3] == 1
          end
          redis.call('HSET', key(tag, 'm'), id, cmsgpack.pack({user, features, visible and 1 or 0, utag}))
          local entry = loadUser(tag, user) or {sessions = 0, visible = 0, states = fresh}
          local others = entry.visible - (wasVisible and 1 or 0)
          if before == -1 then
            entry.sessions = entry.sessions + 1
            redis.call('ZADD', sessions, 0, id .. '\\nc\\n' .. tag)
            redis.call('ZADD', channels, 0, tag)
          end
          local seq = nil
          if wasVisible ~= visible then
            entry.visible = entry.visible + (visible and 1 or -1)
            if others == 0 and visible then
              seq = nextSeq(tag)
              redis.call('ZADD', key(tag, 'r'), seq, user)
              redis.call('SADD', key(utag, 'in'), tag)
            elseif others == 0 then
              redis.call('ZREM', key(tag, 'r'), user)
              redis.call('SREM', key(utag, 'in'), tag)
            end
          end
          if listens then
            redis.call('SADD', key(tag, 'l'), id)
          else
            redis.call('SREM', key(tag, 'l'), id)
          end
          saveUser(tag, user, entry)
          local occupancy = redis.call('ZCARD', key(tag, 'r'))
          if wasVisible ~= visible then
            announce(tag, seq or nextSeq(tag), visible and 1 or 2, id, user, entry.states, others == 0, occupancy)
          end
          return {before, others, occupancy, flat(entry.states)}
        end

        -- `id` leaves the channel of `tag`; what it changed, or nil when it was not a member.
        local function leaveChannel(tag, id, timedOut)
          local raw = redis.call('HGET', key(tag, 'm'), id)
          if not raw then return nil end
          local member = cmsgpack.unpack(raw)
          local user, features, wasVisible, utag = member[1], member[2], member[3] == 1, member[4]
          redis.call('SREM', key(tag, 'l'), id)
          redis.call('HDEL', key(tag, 'm'), id)
          redis.call('ZREM', sessions, id .. '\\nc\\n' .. tag)
          if redis.call('EXISTS', key(tag, 'm')) == 0 then redis.call('ZREM', channels, tag) end
          local entry = loadUser(tag, user) or {sessions = 1, visible = 0, states = {}}
          local others = entry.visible - (wasVisible and 1 or 0)
          local states = {}
          if entry.sessions <= 1 then
            redis.call('HDEL', key(tag, 'u'), user)
          else
            entry.sessions = entry.sessions - 1
            entry.visible = others
            saveUser(tag, user, entry)
            states = entry.states
          end
          if wasVisible and others == 0 then
            redis.call('ZREM', key(tag, 'r'), user)
            redis.call('SREM', key(utag, 'in'), tag)
          end
          local occupancy = redis.call('ZCARD', key(tag, 'r'))
          if wasVisible then announce(tag, nextSeq(tag), timedOut and 3 or 2, id, user, states, others == 0, occupancy) end
          return {features, others, occupancy, flat(states), user}
        end

        -- `id`, a session of the user of `utag`, ends: the user is offline once it was the last.
        local function closeSession(utag, id, now, keep)
          redis.call('HDEL', key(utag, 'on'), id)
          redis.call('ZREM', sessions, id .. '\\nu\\n' .. utag)
          if redis.call('HLEN', key(utag, 'on')) == 0 then redis.call('SET', key(utag, 'seen'), now, 'PX', keep) end
        end

        """
}
