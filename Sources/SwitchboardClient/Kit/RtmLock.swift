import Foundation
import SwitchboardCore
import SwitchboardWire

/// The lock instance (`AgoraRtmLock`): named locks in message and stream channels. Every call
/// exists in the reference's two forms, `async` and with a completion block.
///
/// `acquireLock` with `retry: true` returns when the lock is acquired, however long that takes, or
/// when the wait ends (the lock is removed, this client leaves the channel, calls `releaseLock`
/// for it, or logs out). Each acquisition has a fencing token; a lock can end while its owner
/// still believes it holds it (a pause longer than the ttl), so pass the token with every write
/// made under the lock and let what is written check it (`RtmMetadataOptions.fencingToken` does
/// for channel metadata).
public final class RtmLock: NSObject, Sendable {
    private let kit: RtmClientKit

    init(kit: RtmClientKit) { self.kit = kit }

    /// Creates a lock; members with the lock feature get `lockSet`. `ttl` (10–300 s) is how long
    /// the lock stays with an owner whose connection is lost.
    public func setLock(channelName: String, channelType: RtmChannelType, lockName: String, ttl: Int32 = 10) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await call(channelName, channelType, lockName) { .setLock($0, ttl: Int(max(0, ttl))) }.result()
    }

    /// Creates a lock, calling `completionBlock` when done.
    public func setLock(
        channelName: String, channelType: RtmChannelType, lockName: String, ttl: Int32 = 10,
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        call(channelName, channelType, lockName) { .setLock($0, ttl: Int(max(0, ttl))) }.complete(completionBlock)
    }

    /// Acquires a lock. Held by another: fails with `lockAcquireFailed`, or with `retry` waits in
    /// line, first come first served, and returns once it is this client's. The acquisition's
    /// fencing token is in `getLocks`, or in the answer of `acquireFencedLock`.
    public func acquireLock(channelName: String, channelType: RtmChannelType, lockName: String, retry: Bool) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        let (acquired, error) = await acquireFencedLock(channelName: channelName, channelType: channelType, lockName: lockName, retry: retry)
        return (acquired.map(RtmCommonResponse.init), error)
    }

    /// Acquires a lock, calling `completionBlock` when it is acquired or cannot be.
    public func acquireLock(
        channelName: String, channelType: RtmChannelType, lockName: String, retry: Bool,
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        kit.acquireLockCall(LockAddress(channelType, channelName, lockName), retry: retry).complete { acquired, error in
            completionBlock?(acquired.map(RtmCommonResponse.init), error)
        }
    }

    /// Switchboard extension: `acquireLock`, answered with the acquisition's fencing token, to
    /// pass with every write made under the lock (`RtmMetadataOptions.fencingToken`).
    public func acquireFencedLock(channelName: String, channelType: RtmChannelType, lockName: String, retry: Bool) async
        -> (RtmAcquireLockResponse?, RtmErrorInfo?)
    {
        await kit.acquireLockCall(LockAddress(channelType, channelName, lockName), retry: retry).result()
    }

    /// Switchboard extension: `acquireFencedLock`, calling `completionBlock` when the lock is
    /// acquired or cannot be.
    public func acquireFencedLock(
        channelName: String, channelType: RtmChannelType, lockName: String, retry: Bool,
        completion completionBlock: RtmAcquireLockBlock? = nil
    ) {
        kit.acquireLockCall(LockAddress(channelType, channelName, lockName), retry: retry).complete(completionBlock)
    }

    /// Releases a lock this client holds (the first in line gets it), or stops waiting for it.
    public func releaseLock(channelName: String, channelType: RtmChannelType, lockName: String) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await call(channelName, channelType, lockName) { .releaseLock($0) }.result()
    }

    /// Releases a lock, calling `completionBlock` when done.
    public func releaseLock(
        channelName: String, channelType: RtmChannelType, lockName: String, completion completionBlock: RtmOperationBlock? = nil
    ) {
        call(channelName, channelType, lockName) { .releaseLock($0) }.complete(completionBlock)
    }

    /// Takes a lock from `userId`, who holds it; members get `lockReleased`.
    public func revokeLock(channelName: String, channelType: RtmChannelType, lockName: String, userId: String) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await call(channelName, channelType, lockName) { .revokeLock($0, userId: userId) }.result()
    }

    /// Takes a lock from `userId`, calling `completionBlock` when done.
    public func revokeLock(
        channelName: String, channelType: RtmChannelType, lockName: String, userId: String,
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        call(channelName, channelType, lockName) { .revokeLock($0, userId: userId) }.complete(completionBlock)
    }

    /// The locks of a channel: name, owner, ttl and fencing token of each.
    public func getLocks(channelName: String, channelType: RtmChannelType) async -> (RtmGetLocksResponse?, RtmErrorInfo?) {
        await kit.getLocksCall(ChannelAddress(channelType, channelName)).result()
    }

    /// The locks of a channel, handed to `completionBlock`.
    public func getLocks(channelName: String, channelType: RtmChannelType, completion completionBlock: RtmGetLocksBlock? = nil) {
        kit.getLocksCall(ChannelAddress(channelType, channelName)).complete(completionBlock)
    }

    /// Deletes a lock, whoever holds it; members get `lockRemoved`, waiters stop waiting.
    public func removeLock(channelName: String, channelType: RtmChannelType, lockName: String) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await call(channelName, channelType, lockName) { .removeLock($0) }.result()
    }

    /// Deletes a lock, calling `completionBlock` when done.
    public func removeLock(
        channelName: String, channelType: RtmChannelType, lockName: String, completion completionBlock: RtmOperationBlock? = nil
    ) {
        call(channelName, channelType, lockName) { .removeLock($0) }.complete(completionBlock)
    }

    /// The call of `operation` on lock `name` of the channel; its success is the common response.
    private func call(
        _ channel: String, _ type: RtmChannelType, _ name: String, _ operation: (LockAddress) -> LockOperation
    ) -> RtmCall<RtmCommonResponse> {
        kit.lockCall(operation(LockAddress(type, channel, name)), channel: channel)
    }
}
