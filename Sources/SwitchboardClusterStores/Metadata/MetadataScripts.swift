import SwitchboardCluster
import SwitchboardRedis

/// The Lua scripts of `RedisMetadataStore`, one per atomic operation. Each runs on one set's keys
/// (KEYS 1 to 3: the set, its revision, its fences) and the store's two indexes (KEYS 4 and 5:
/// `leases`, `bound`); ARGV 1 and 2 are the set's tag and change channel. A change bumps the
/// set's revision, saves the set, puts the indexes right and publishes the change, all in the
/// script, so the order of the published changes is the order of the revisions.
///
/// A set is stored as one string of netstring fields (`length:bytes`): the format (`1`), the
/// major revision, then nine fields per item: key, value, size, revision, updateTs, author,
/// position, expiresAt and session (the last two empty when not leased). A change is published as
/// its revision's field followed by the set (nothing when the set is gone). `StoredSetCodec`
/// reads both.
enum MetadataScripts {
    /// `MetadataRules.fence` and `MetadataRules.apply`, as one step. ARGV 3…: kind (`set`,
    /// `update`, `remove`), expected major revision, updateTs, author, the items-per-set and
    /// set-size limits, the fence's field (empty for none), run and token; the lock to check
    /// (its channel's lock hash, empty for none, its name and the writer's `node:session`: the
    /// writer must hold it now with that token, checked where the locks are, in the same step as
    /// the write; a session of a node the reaper marked, or one another node took over, holds nothing); the number of items, then six per item: key, value, size, expected revision, expiresAt, session. Answers
    /// `{1, revision, set}` or a refusal `{0, kind, …}`.
    static let write = RedisScript(
        DeadNodes.isGoneFunction + prelude + """
            local kind, expectedMajor = ARGV[3], tonumber(ARGV[4])
            local updateTs, author = ARGV[5], ARGV[6]
            local itemsPerSet, setMaxBytes = tonumber(ARGV[7]), tonumber(ARGV[8])
            local fenceField, fenceRun, fenceToken = ARGV[9], ARGV[10], ARGV[11]
            local lockHash, lockName, lockHolder = ARGV[12], ARGV[13], ARGV[14]
            local writes = {}
            for i = 0, tonumber(ARGV[15]) - 1 do
              local at = 16 + i * 6
              writes[#writes + 1] = {key = ARGV[at], value = ARGV[at + 1], size = tonumber(ARGV[at + 2]),
                expected = tonumber(ARGV[at + 3]), expiresAt = ARGV[at + 4], session = ARGV[at + 5]}
            end
            if lockHash ~= '' then
              local raw = redis.call('HGET', lockHash, lockName)
              if not raw then return {0, 'noLock'} end
              local lock = cmsgpack.unpack(raw)
              if lock[2] ~= lockHolder or isGone(lockHolder) then return {0, 'notHolder', lock[3]} end
              local current = string.format('%d', lock[4])
              if current ~= fenceToken then return {0, 'notHolder', lock[3], current} end
            end
            if fenceField ~= '' then
              local kept = redis.call('HGET', KEYS[3], fenceField)
              if kept then
                local colon = string.find(kept, ':', 1, true)
                local run, token = string.sub(kept, 1, colon - 1), string.sub(kept, colon + 1)
                if run == fenceRun and (#token > #fenceToken or (#token == #fenceToken and token > fenceToken)) then
                  return {0, 'staleFence', token}
                end
              end
            end
            local current, revision = load()
            if expectedMajor ~= -1 then
              if not current then return {0, 'noMetadata'} end
              if current.major ~= expectedMajor then return {0, 'outdatedMajor', current.major} end
            end
            local items
            if kind == 'remove' and #writes == 0 then
              if not current then return {0, 'nothingToRemove'} end
              items = {}
            else
              items = {}
              local index, removed = {}, {}
              for i, item in ipairs(current and current.items or {}) do
                items[i] = item
                index[item.key] = i
              end
              for offset, write in ipairs(writes) do
                local existing = index[write.key]
                if write.expected ~= -1 or kind ~= 'set' then
                  if not existing then return {0, 'noItem', write.key} end
                  local stored = items[existing].revision
                  if write.expected ~= -1 and stored ~= write.expected then return {0, 'outdatedItem', write.key, stored} end
                end
                if kind == 'remove' then
                  removed[existing] = true
                elseif existing then
                  local item = items[existing]
                  item.value, item.size, item.revision, item.updateTs = write.value, write.size, revision, updateTs
                  item.author, item.expiresAt, item.session = author, write.expiresAt, write.session
                else
                  items[#items + 1] = {key = write.key, value = write.value, size = write.size, revision = revision,
                    updateTs = updateTs, author = author, position = int(revision * 1024 + offset - 1),
                    expiresAt = write.expiresAt, session = write.session}
                  index[write.key] = #items
                end
              end
              if next(removed) then
                local kept = {}
                for i, item in ipairs(items) do
                  if not removed[i] then kept[#kept + 1] = item end
                end
                items = kept
              end
              if #items > itemsPerSet then return {0, 'tooManyItems', #items} end
              local bytes = 0
              for _, item in ipairs(items) do bytes = bytes + #item.key + item.size end
              if bytes > setMaxBytes then return {0, 'tooLarge', bytes} end
            end
            if fenceField ~= '' then redis.call('HSET', KEYS[3], fenceField, fenceRun .. ':' .. fenceToken) end
            return {1, revision, commit(current, items, revision)}
            """)

    /// `MetadataRules.removing` of the items whose time to live ran out at ARGV 3 (milliseconds
    /// since 1970). Answers `{1, revision, set}`, or `{0}` when none had.
    static let expire = RedisScript(
        prelude + """
            local now = tonumber(ARGV[3])
            return removing(function(item) return item.expiresAt ~= '' and tonumber(item.expiresAt) <= now end)
            """)

    /// `MetadataRules.removing` of the items bound to the session ARGV 3 (`node:session`); ARGV 4
    /// is the session's entry of this set in `bound`. Answers `{1, revision, set}`, or `{0}` (and
    /// drops the entry) when no item was bound to it.
    static let endSession = RedisScript(
        prelude + """
            local session = ARGV[3]
            return removing(function(item) return item.session == session end)
            """)

    /// The items bound to the session ARGV 3 (`node:session`, a session another node took over)
    /// are bound to ARGV 4 instead, in place: the revision stays and nothing is published (no
    /// one sees a change). Answers 1 when some item was bound to it, else 0.
    static let rebind = RedisScript(
        prelude + """
            local old, new = ARGV[3], ARGV[4]
            redis.call('ZREM', KEYS[5], old .. ':' .. ARGV[1])
            local stored = redis.call('GET', KEYS[1])
            if not stored then return 0 end
            local current = decode(stored)
            local moved = false
            for _, item in ipairs(current.items) do
              if item.session == old then
                item.session = new
                moved = true
              end
            end
            if not moved then return 0 end
            redis.call('SET', KEYS[1], encode(current.major, current.items))
            redis.call('ZADD', KEYS[5], 0, new .. ':' .. ARGV[1])
            return 1
            """)

    /// What every script shares: reading and writing the set, and the change's commit.
    private static let prelude = """
        local function field(text) return #text .. ':' .. text end
        local function int(number) return string.format('%d', number) end

        local function decode(blob)
          local fields, at = {}, 1
          while at <= #blob do
            local colon = string.find(blob, ':', at, true)
            local length = tonumber(string.sub(blob, at, colon - 1))
            fields[#fields + 1] = string.sub(blob, colon + 1, colon + length)
            at = colon + length + 1
          end
          local items = {}
          for i = 3, #fields, 9 do
            items[#items + 1] = {key = fields[i], value = fields[i + 1], size = tonumber(fields[i + 2]),
              revision = tonumber(fields[i + 3]), updateTs = fields[i + 4], author = fields[i + 5],
              position = fields[i + 6], expiresAt = fields[i + 7], session = fields[i + 8]}
          end
          return {major = tonumber(fields[2]), items = items}
        end

        local function encode(revision, items)
          local parts = {field('1'), field(int(revision))}
          for _, item in ipairs(items) do
            parts[#parts + 1] = field(item.key) .. field(item.value) .. field(int(item.size)) .. field(int(item.revision))
              .. field(item.updateTs) .. field(item.author) .. field(item.position) .. field(item.expiresAt)
              .. field(item.session)
          end
          return table.concat(parts)
        end

        -- The set (nil when there is none) and the revision its next change gets.
        local function load()
          local stored = redis.call('GET', KEYS[1])
          local current = nil
          if stored then current = decode(stored) end
          return current, tonumber(redis.call('GET', KEYS[2]) or '0') + 1
        end

        -- Points the indexes at the set of `items` (none: the set is gone), which had `old`.
        local function reindex(old, items)
          local tag = ARGV[1]
          local earliest, sessions = nil, {}
          for _, item in ipairs(items) do
            if item.expiresAt ~= '' then
              local at = tonumber(item.expiresAt)
              if not earliest or at < earliest then earliest = at end
            end
            if item.session ~= '' then sessions[item.session] = true end
          end
          if earliest then redis.call('ZADD', KEYS[4], int(earliest), tag) else redis.call('ZREM', KEYS[4], tag) end
          for _, item in ipairs(old) do
            if item.session ~= '' and not sessions[item.session] then redis.call('ZREM', KEYS[5], item.session .. ':' .. tag) end
          end
          for session in pairs(sessions) do redis.call('ZADD', KEYS[5], 0, session .. ':' .. tag) end
        end

        -- Saves `items` (none: the set is gone) as change `revision` of the set that was `old`,
        -- puts the indexes right and publishes the change. Returns the set as stored ('' if gone).
        local function commit(old, items, revision)
          local blob = ''
          if #items > 0 then
            blob = encode(revision, items)
            redis.call('SET', KEYS[1], blob)
          else
            redis.call('DEL', KEYS[1])
          end
          redis.call('SET', KEYS[2], int(revision))
          reindex(old and old.items or {}, items)
          redis.call('PUBLISH', ARGV[2], field(int(revision)) .. blob)
          return blob
        end

        -- Removes the items `picks` picks as one change; {0} when it picks none.
        local function removing(picks)
          local current, revision = load()
          local kept, changed = {}, false
          for _, item in ipairs(current and current.items or {}) do
            if picks(item) then changed = true else kept[#kept + 1] = item end
          end
          if not changed then
            -- Nothing to remove (any more): the indexes point at no more than there is.
            reindex(kept, kept)
            if ARGV[4] then redis.call('ZREM', KEYS[5], ARGV[4]) end
            return {0}
          end
          return {1, revision, commit(current, kept, revision)}
        end

        """
}
