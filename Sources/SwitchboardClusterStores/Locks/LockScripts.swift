import SwitchboardCluster
import SwitchboardRedis

/// The Lua scripts of `RedisLockStore`, one per atomic operation: the rules of the in-memory
/// `LockTable`, run where every node's operations meet.
///
/// A lock is a field of its channel's hash (`LockKeys.locks`), a MessagePack array: ttl, owner
/// (`node:session`, empty when free), the owner's user id, the fencing token, and the line of
/// waiters as id and user id one after another. Beside it, per channel, `…:token` (the fencing
/// counter: no TTL, never reset, so a lock's tokens only grow, across a removal and a restart of
/// Redis that kept its file) and `…:seq` (the number of the channel's last change). The store's
/// indexes: `sb:lk:sessions` (scores 0, read by prefix: `id\ntag\nname` for every lock a session
/// owns or waits for), `sb:lk:suspended` (the sessions whose connection is lost) and
/// `sb:lk:countdowns` (`tag\nname` scored by the wall-clock millisecond its lost owner's ttl
/// runs out); per app `sb:lk:app:{app}`, its number of locks. A session of a node the reaper
/// marked (`DeadNodes.reapedKey`) may no longer acquire or release, and its suspension and resume
/// change nothing: what it held is the reaper's to count down. A session another node took over
/// (`DeadNodes.movedKey`) may not acquire or release under its old name either.
///
/// Every change of a channel's locks bumps its `…:seq` and is published on its `…:events`
/// channel as a MessagePack array `[tag, seq, effects]`, where an effect is `[1, event type,
/// lock name, owner's user id, ttl, token]`, `[2, id, lock name, token]` (a grant) or
/// `[3, id, lock name, why]` (an ended wait: 1 removed, 2 left the channel, 3 withdrawn). The
/// script returns the same arrays it published, so the node that asked reads its effects as the
/// others do. A script builds the names of the channels it touches from their tags (an
/// operation on a session may touch several): fine on one Redis, as the metadata scripts'
/// indexes are; a Redis Cluster would need them split by slot first.
enum LockScripts {
    /// ARGV: tag, app (escaped), name, ttl, locks per channel, locks per app.
    /// `{1, 0, changes}` or `{0, refusal}`.
    static let set = RedisScript(
        prelude + """
            local tag, app, name = ARGV[1], ARGV[2], ARGV[3]
            local ttl, maxLocks, maxInApp = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
            if redis.call('HEXISTS', key(tag, 'locks'), name) == 1 then return {0, 'alreadyExists'} end
            if redis.call('HLEN', key(tag, 'locks')) >= maxLocks then return {0, 'tooManyLocks'} end
            local appKey = 'sb:lk:app:{' .. app .. '}'
            if tonumber(redis.call('GET', appKey) or '0') >= maxInApp then return {0, 'tooManyLocksInApp'} end
            local lock = {ttl = ttl, owner = '', user = '', token = 0, line = {}}
            save(tag, name, lock)
            redis.call('INCR', appKey)
            event(tag, 2, name, lock)
            return {1, 0, finish()}
            """)

    /// ARGV: tag, app (escaped), name. `{1, 0, changes}` or `{0, 'notExist'}`.
    static let remove = RedisScript(
        prelude + """
            local tag, app, name = ARGV[1], ARGV[2], ARGV[3]
            local lock = load(tag, name)
            if not lock then return {0, 'notExist'} end
            event(tag, 3, name, lock)
            redis.call('HDEL', key(tag, 'locks'), name)
            local appKey = 'sb:lk:app:{' .. app .. '}'
            if redis.call('DECR', appKey) <= 0 then redis.call('DEL', appKey) end
            redis.call('ZREM', countdowns, countdown(tag, name))
            if lock.owner ~= '' then redis.call('ZREM', sessions, entry(lock.owner, tag, name)) end
            for i = 1, #lock.line, 2 do
              redis.call('ZREM', sessions, entry(lock.line[i], tag, name))
              note(tag, {3, lock.line[i], name, 1})
            end
            return {1, 0, finish()}
            """)

    /// ARGV: tag, name, id, user, wait (`1`), now. `{1, token, changes}` (acquired), `{2, 0, {}}`
    /// (in line) or `{0, refusal, owner}`.
    static let acquire = RedisScript(
        prelude + """
            local tag, name, id, user, wait, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
            local lock = load(tag, name)
            if not lock then return {0, 'notExist'} end
            if isGone(id) then return {0, 'notOwner', lock.user} end
            if lock.owner == '' then
              local token = give(tag, name, lock, id, user, now)
              save(tag, name, lock)
              event(tag, 4, name, lock)
              return {1, token, finish()}
            end
            if lock.owner == id then return {1, lock.token, {}} end
            if wait ~= '1' then return {0, 'heldByOther', lock.user} end
            if place(lock, id) then return {0, 'alreadyWaiting'} end
            lock.line[#lock.line + 1] = id
            lock.line[#lock.line + 1] = user
            redis.call('ZADD', sessions, 0, entry(id, tag, name))
            save(tag, name, lock)
            return {2, 0, {}}
            """)

    /// ARGV: tag, name, id, now. `{1, 0, changes}` or `{0, refusal, owner}`.
    static let release = RedisScript(
        prelude + """
            local tag, name, id, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
            local lock = load(tag, name)
            if not lock then return {0, 'notExist'} end
            if isGone(id) then return {0, 'notOwner', lock.user} end
            if lock.owner == id then
              handOver(tag, name, lock, now)
              return {1, 0, finish()}
            end
            if leaveLine(tag, name, lock, id) then
              save(tag, name, lock)
              note(tag, {3, id, name, 3})
              return {1, 0, finish()}
            end
            return {0, 'notOwner', lock.user}
            """)

    /// ARGV: tag, name, the owner's user id, now. `{1, 0, changes}` or `{0, refusal, owner}`.
    static let revoke = RedisScript(
        prelude + """
            local tag, name, user, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
            local lock = load(tag, name)
            if not lock then return {0, 'notExist'} end
            if lock.owner == '' or lock.user ~= user then return {0, 'notOwner', lock.user} end
            handOver(tag, name, lock, now)
            return {1, 0, finish()}
            """)

    /// ARGV: tag. `{seq, {name, owner's user, ttl, token, …}}`, sorted by name.
    static let snapshot = RedisScript(
        prelude + """
            local tag = ARGV[1]
            local all = redis.call('HGETALL', key(tag, 'locks'))
            local names, raw = {}, {}
            for i = 1, #all, 2 do
              names[#names + 1] = all[i]
              raw[all[i]] = all[i + 1]
            end
            table.sort(names)
            local out = {}
            for _, name in ipairs(names) do
              local lock = decode(raw[name])
              out[#out + 1] = name
              out[#out + 1] = lock.user
              out[#out + 1] = lock.ttl
              out[#out + 1] = lock.token
            end
            return {tonumber(redis.call('GET', key(tag, 'seq')) or '0'), out}
            """)

    /// ARGV: tag, name. `{1, owner, user, token}` (owner empty when free) or `{0}`.
    static let holder = RedisScript(
        prelude + """
            local lock = load(ARGV[1], ARGV[2])
            if not lock then return {0} end
            return {1, lock.owner, lock.user, lock.token}
            """)

    /// ARGV: tag. `{locks, held, waiters}`.
    static let tally = RedisScript(
        prelude + """
            local all = redis.call('HVALS', key(ARGV[1], 'locks'))
            local held, waiters = 0, 0
            for _, raw in ipairs(all) do
              local lock = decode(raw)
              if lock.owner ~= '' then held = held + 1 end
              waiters = waiters + #lock.line / 2
            end
            return {#all, held, waiters}
            """)

    /// ARGV: id, now. The session's locks start their ttl (those it is given later too).
    static let suspend = RedisScript(
        prelude + """
            local id, now = ARGV[1], tonumber(ARGV[2])
            if isReaped(id) then return 1 end
            redis.call('SADD', suspended, id)
            for _, at in ipairs(entriesOf(id)) do
              local lock = load(at[1], at[2])
              if lock and lock.owner == id then
                redis.call('ZADD', countdowns, 'NX', now + lock.ttl * 1000, countdown(at[1], at[2]))
              end
            end
            return 1
            """)

    /// ARGV: id. The session's locks stop counting down.
    static let resume = RedisScript(
        prelude + """
            local id = ARGV[1]
            if isReaped(id) then return 1 end
            redis.call('SREM', suspended, id)
            for _, at in ipairs(entriesOf(id)) do
              local lock = load(at[1], at[2])
              if lock and lock.owner == id then redis.call('ZREM', countdowns, countdown(at[1], at[2])) end
            end
            return 1
            """)

    /// ARGV: the former id, the new id (a session taken over by another node). What the session
    /// owns and waits for becomes the new id's, in place; it is connected, so its locks stop
    /// counting down. Nobody is told: the owner's user is the same. `1`.
    static let takeOver = RedisScript(
        prelude + """
            local old, new = ARGV[1], ARGV[2]
            redis.call('SREM', suspended, old)
            for _, at in ipairs(entriesOf(old)) do
              local tag, name = at[1], at[2]
              redis.call('ZREM', sessions, entry(old, tag, name))
              local lock = load(tag, name)
              if lock then
                if lock.owner == old then
                  lock.owner = new
                  redis.call('ZREM', countdowns, countdown(tag, name))
                else
                  local i = place(lock, old)
                  if i then lock.line[i] = new end
                end
                save(tag, name, lock)
                redis.call('ZADD', sessions, 0, entry(new, tag, name))
              end
            end
            return 1
            """)

    /// ARGV: a prefix of ids (`node:session` for one session, `node:` for every session of a
    /// node), now, and for a dead node the wall-clock millisecond of its last beat. Each session
    /// leaves every line, silently, then its locks go to the next in line; a dead node's (only
    /// while it is marked reaped) keep them for their ttl from its last beat instead, counted
    /// down as a lost owner's (the earlier deadline stays), so the sweep hands them over.
    /// `changes`.
    static let end = RedisScript(
        prelude + """
            local prefix, now, lastBeat = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3] or '')
            if lastBeat and not isReaped(prefix) then return {} end
            local ids, seen = {}, {}
            for _, member in ipairs(redis.call('ZRANGEBYLEX', sessions, '[' .. prefix, '[' .. prefix .. '\\255')) do
              local id = string.sub(member, 1, string.find(member, '\\n', 1, true) - 1)
              if (id == prefix or string.sub(prefix, -1) == ':') and not seen[id] then
                seen[id] = true
                ids[#ids + 1] = id
              end
            end
            for _, id in ipairs(redis.call('SMEMBERS', suspended)) do
              if id == prefix or (string.sub(prefix, -1) == ':' and string.sub(id, 1, #prefix) == prefix) then
                redis.call('SREM', suspended, id)
              end
            end
            for _, id in ipairs(ids) do
              local held = entriesOf(id)
              for _, at in ipairs(held) do
                local lock = load(at[1], at[2])
                if not lock then
                  redis.call('ZREM', sessions, entry(id, at[1], at[2]))
                elseif lock.owner ~= id and leaveLine(at[1], at[2], lock, id) then
                  save(at[1], at[2], lock)
                end
              end
              for _, at in ipairs(held) do
                local lock = load(at[1], at[2])
                if lock and lock.owner == id then
                  if lastBeat then
                    redis.call('ZADD', countdowns, 'LT', lastBeat + lock.ttl * 1000, countdown(at[1], at[2]))
                  else
                    handOver(at[1], at[2], lock, now)
                  end
                end
              end
            end
            return finish()
            """)

    /// ARGV: id, tag, now. The session leaves the channel's lines (each wait ends), then its
    /// locks there go to the next in line. `changes`.
    static let leave = RedisScript(
        prelude + """
            local id, tag, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
            local here = {}
            for _, at in ipairs(entriesOf(id)) do
              if at[1] == tag then here[#here + 1] = at[2] end
            end
            for _, name in ipairs(here) do
              local lock = load(tag, name)
              if lock and lock.owner ~= id and leaveLine(tag, name, lock, id) then
                save(tag, name, lock)
                note(tag, {3, id, name, 2})
              end
            end
            for _, name in ipairs(here) do
              local lock = load(tag, name)
              if lock and lock.owner == id then handOver(tag, name, lock, now) end
            end
            return finish()
            """)

    /// ARGV: now, how many at most. The locks whose lost owner's ttl ran out by `now` go to the
    /// next in line, earliest first. `changes`.
    static let expire = RedisScript(
        prelude + """
            local now, most = tonumber(ARGV[1]), tonumber(ARGV[2])
            local due = redis.call('ZRANGEBYSCORE', countdowns, '-inf', now, 'LIMIT', 0, most)
            for _, member in ipairs(due) do
              local newline = string.find(member, '\\n', 1, true)
              local tag, name = string.sub(member, 1, newline - 1), string.sub(member, newline + 1)
              local lock = load(tag, name)
              if lock and lock.owner ~= '' then
                handOver(tag, name, lock, now)
              else
                redis.call('ZREM', countdowns, member)
              end
            end
            return finish()
            """)

    /// What every script shares: the names, reading and writing a lock, handing it over, and
    /// numbering and publishing each channel's change.
    private static let prelude = DeadNodes.isGoneFunction + """
        local sessions, suspended, countdowns = 'sb:lk:sessions', 'sb:lk:suspended', 'sb:lk:countdowns'
        local function key(tag, what) return 'sb:lk:{' .. tag .. '}:' .. what end
        local function entry(id, tag, name) return id .. '\\n' .. tag .. '\\n' .. name end
        local function countdown(tag, name) return tag .. '\\n' .. name end

        local function decode(raw)
          local fields = cmsgpack.unpack(raw)
          return {ttl = fields[1], owner = fields[2], user = fields[3], token = fields[4], line = fields[5] or {}}
        end
        local function load(tag, name)
          local raw = redis.call('HGET', key(tag, 'locks'), name)
          if not raw then return nil end
          return decode(raw)
        end
        local function save(tag, name, lock)
          redis.call('HSET', key(tag, 'locks'), name, cmsgpack.pack({lock.ttl, lock.owner, lock.user, lock.token, lock.line}))
        end

        -- The changes of this call, per channel, in the order they happened.
        local changes, touched = {}, {}
        local function note(tag, effect)
          if not changes[tag] then
            changes[tag] = {}
            touched[#touched + 1] = tag
          end
          changes[tag][#changes[tag] + 1] = effect
        end
        local function event(tag, kind, name, lock) note(tag, {1, kind, name, lock.user, lock.ttl, lock.token}) end
        -- Numbers each touched channel's change, publishes it, and returns them all.
        local function finish()
          local published = {}
          for _, tag in ipairs(touched) do
            local seq = redis.call('INCR', key(tag, 'seq'))
            local blob = cmsgpack.pack({tag, seq, changes[tag]})
            redis.call('PUBLISH', key(tag, 'events'), blob)
            published[#published + 1] = blob
          end
          return published
        end

        -- Every lock `id` owns or waits for, as {tag, name}, sorted.
        local function entriesOf(id)
          local found = {}
          for _, member in ipairs(redis.call('ZRANGEBYLEX', sessions, '[' .. id .. '\\n', '[' .. id .. '\\n\\255')) do
            local rest = string.sub(member, #id + 2)
            local newline = string.find(rest, '\\n', 1, true)
            found[#found + 1] = {string.sub(rest, 1, newline - 1), string.sub(rest, newline + 1)}
          end
          return found
        end

        -- Where `id` stands in the lock's line; nil when it is not in it.
        local function place(lock, id)
          for i = 1, #lock.line, 2 do
            if lock.line[i] == id then return i end
          end
          return nil
        end
        local function leaveLine(tag, name, lock, id)
          local at = place(lock, id)
          if not at then return false end
          table.remove(lock.line, at)
          table.remove(lock.line, at)
          redis.call('ZREM', sessions, entry(id, tag, name))
          return true
        end

        -- Makes `id` the owner of the free lock with the channel's next token; a suspended
        -- owner's ttl starts at once.
        local function give(tag, name, lock, id, user, now)
          local token = redis.call('INCR', key(tag, 'token'))
          lock.owner, lock.user, lock.token = id, user, token
          redis.call('ZADD', sessions, 0, entry(id, tag, name))
          if redis.call('SISMEMBER', suspended, id) == 1 then
            redis.call('ZADD', countdowns, now + lock.ttl * 1000, countdown(tag, name))
          end
          return token
        end

        -- The owner loses the lock (`lockReleased`) and the first in line, if any, gets it.
        local function handOver(tag, name, lock, now)
          if lock.owner == '' then return end
          event(tag, 5, name, lock)
          redis.call('ZREM', sessions, entry(lock.owner, tag, name))
          redis.call('ZREM', countdowns, countdown(tag, name))
          lock.owner, lock.user, lock.token = '', '', 0
          if #lock.line > 0 then
            local id = table.remove(lock.line, 1)
            local user = table.remove(lock.line, 1)
            local token = give(tag, name, lock, id, user, now)
            event(tag, 4, name, lock)
            note(tag, {2, id, name, token})
          end
          save(tag, name, lock)
        end

        """
}
