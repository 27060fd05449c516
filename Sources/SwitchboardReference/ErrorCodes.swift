/// Error codes of the reference (`AgoraRtmErrorCode`), with their raw values.
public enum RtmErrorCode: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Correct call.
    case ok = 0
    /// The SDK is not initialized.
    case notInitialized = -10001
    /// The user called the API without logging in to Signaling, disconnected due to timeout, or actively logged out.
    case notLogin = -10002
    /// Invalid App ID: Check that the App ID is correct.
    case invalidAppId = -10003
    /// Invalid Token: The token is invalid, check whether the Token Provider generates a valid Signaling Token.
    case invalidToken = -10005
    /// Invalid User ID: Check if user ID is empty.
    case invalidUserId = -10006
    /// SDK initialization failed.
    case initServiceFailed = -10007
    /// Invalid channel name: Check if the channel name is empty.
    case invalidChannelName = -10008
    /// Token expired.
    case tokenExpired = -10009
    /// Server resources are limited.
    case loginNoServerResources = -10010
    /// Login timeout.
    case loginTimeout = -10011
    /// SDK login rejected by the server: Check tha Signaling is activated on your App ID.
    case loginRejected = -10012
    /// SDK login interrupted due to unknown problem: Check that the current network is stable and switch to a stable network environment.
    case loginAborted = -10013
    /// Invalid parameter.
    case invalidParameter = -10014
    /// No RTM service permissions.
    case loginNotAuthorized = -10015
    /// Inconsistent App ID.
    case loginInconsistentAppId = -10016
    /// Duplicate operation.
    case duplicateOperation = -10017
    /// Repeat rtm instantiation or RTMStreamChannel instantiation.
    case instanceAlreadyReleased = -10018
    /// Invalid channel type.
    case invalidChannelType = -10019
    /// Message encryption parameters are invalid.
    case invalidEncryptionParameter = -10020
    /// Channel metadata or User Metadata -related API call frequency is exceeding the limit.
    case operationRateExceedLimitation = -10021
    /// The service type is not supported.
    case serviceNotSupport = -10022
    /// The login operation has been canceled.
    case loginCanceled = -10023
    /// The private deployment parameter settings are invalid.
    case invalidPrivateConfig = -10024
    /// Not connected to the Signaling server.
    case notConnected = -10025
    /// Token renewal timed out.
    case renewTokenTimeout = -10026
    /// The user has not joined the channel: The user is not online, offline or has not joined the channel - Check for typos in userId.
    case channelNotJoined = -11001
    /// The user has not subscribed to the channel: The user is not online, offline or has not joined the channel - Check for typos in userId.
    case channelNotSubscribed = -11002
    /// The number of subscribers to this topic exceeds the limit.
    case channelExceedTopicUserLimitation = -11003
    /// In co-channel mode, RTM released the Stream Channel.
    case channelReused = -11004
    /// The number of created or subscribed channels exceeds the limit.
    case channelInstanceExceedLimitation = -11005
    /// Channel is not available.
    case channelInErrorState = -11006
    /// Failed to join this channel: Check if the number of joined channels exceeds the limit.
    case channelJoinFailed = -11007
    /// Invalid topic name: Check whether the topic name contains illegal characters.
    case channelInvalidTopicName = -11008
    /// Invalid message.
    case channelInvalidMessage = -11009
    /// Message length exceeded limit.
    case channelMessageLengthExceedLimitation = -11010
    /// Invalid user list: Check if the user list is empty.
    case channelInvalidUserList = -11011
    /// Invalid user list: Check if the user list is empty - Check if the user list contains illegal items.
    case channelNotAvailable = -11012
    /// The topic is not subscribed.
    case channelTopicNotSubscribed = -11013
    /// The number of topics exceeds the limit.
    case channelExceedTopicLimitation = -11014
    /// Failed to join this topic.
    case channelJoinTopicFailed = -11015
    /// The topic has not been joined.
    case channelTopicNotJoined = -11016
    /// The topic does not exist.
    case channelTopicNotExist = -11017
    /// The meta parameters in the topic are invalid.
    case channelInvalidTopicMeta = -11018
    /// Channel subscription timed out.
    case channelSubscribeTimeout = -11019
    /// The channel subscription operation is too frequent.
    case channelSubscribeTooFrequent = -11020
    /// Channel subscription failed.11003 Check if the number of subscribed channels exceeds the limit.
    case channelSubscribeFailed = -11021
    /// Failed to unsubscribe from the channel.
    case channelUnsubscribeFailed = -11022
    /// Message encryption failed: Check that the cipherKey is valid.
    case channelEncryptMessageFailed = -11023
    /// Message publishing failed.
    case channelPublishMessageFailed = -11024
    /// Message publishing timed out.
    case channelPublishMessageTimeout = -11026
    /// The SDK is disconnected from the Signaling server.
    case channelNotConnected = -11027
    /// Failed to leave the channel.
    case channelLeaveFailed = -11028
    /// Custom type length overflow.
    case channelCustomTypeLengthOverflow = -11029
    /// customType field is invalid.
    case channelInvalidCustomType = -11030
    /// Message type is not supported.
    case channelUnsupportedMessageType = -11031
    /// Presence service is not ready.
    case channelPresenceNotReady = -11032
    /// When sending a user message, the remote user is offline: Check if the user ID set when calling the method is correct.
    case channelReceiverOffline = -11033
    /// The join channel operation has been canceled.
    case channelJoinCanceled = -11034
    /// Storage operation failed.
    case storageOperationFailed = -12001
    /// The number of Storage Metadata Items exceeds the limit.
    case storageMetadataItemExceedLimitation = -12002
    /// Invalid Metadata Item.
    case storageInvalidMetadataItem = -12003
    /// Invalid argument.
    case storageInvalidArgument = -12004
    /// Invalid Revision parameter.
    case storageInvalidRevision = -12005
    /// Metadata overflows.
    case storageMetadataLengthOverflow = -12006
    /// Invalid Lock name.
    case storageInvalidLockName = -12007
    /// The Lock was not acquired.
    case storageLockNotAcquired = -12008
    /// Invalid Metadata key.
    case storageInvalidKey = -12009
    /// Invalid metadata value.
    case storageInvalidValue = -12010
    /// Metadata key length overflow.
    case storageKeyLengthOverflow = -12011
    /// Metadata value length overflow.
    case storageValueLengthOverflow = -12012
    /// Duplicate Metadata Item key.
    case storageDuplicateKey = -12013
    /// Outdated Revision parameter.
    case storageOutdatedRevision = -12014
    /// This channel is not subscribed.
    case storageNotSubscribe = -12015
    /// Metadata instance does not exist.
    case storageInvalidMetadataInstance = -12016
    /// The number of subscribers exceeds the limit.
    case storageSubscribeUserExceedLimitation = -12017
    /// Storage operation timed out.
    case storageOperationTimeout = -12018
    /// The Storage service is not available.
    case storageNotAvailable = -12019
    /// The user is not connected to the system.
    case presenceNotConnected = -13001
    /// Presence service is unavailable.
    case presenceNotWritable = -13002
    /// Invalid argument.
    case presenceInvalidArgument = -13003
    /// The temporary user state cached before joining the channel exceeds the limit.
    case presenceCacheTooManyStates = -13004
    /// The number of temporary user state key/value pairs exceeds the limit.
    case presenceStateCountOverflow = -13005
    /// Invalid state key.
    case presenceInvalidStateKey = -13006
    /// Invalid state value.
    case presenceInvalidStateValue = -13007
    /// Presence key length overflow.
    case presenceStateKeySizeOverflow = -13008
    /// Presence value overflow.
    case presenceStateValueSizeOverflow = -13009
    /// Repeated state key.
    case presenceStateDuplicateKey = -13010
    /// The user does not exist.
    case presenceUserNotExist = -13011
    /// Presence operation timed out.
    case presenceOperationTimeout = -13012
    /// Presence operation failed.
    case presenceOperationFailed = -13013
    /// Lock operation failed.
    case lockOperationFailed = -14001
    /// Lock operation timed out.
    case lockOperationTimeout = -14002
    /// Lock operation in progress.
    case lockOperationPerforming = -14003
    /// Lock already exists.
    case lockAlreadyExist = -14004
    /// Invalid Lock name.
    case lockInvalidName = -14005
    /// The Lock was not acquired.
    case lockNotAcquired = -14006
    /// Failed to acquire the Lock.
    case lockAcquireFailed = -14007
    /// The Lock does not exist.
    case lockNotExist = -14008
    /// Lock service is not available.
    case lockNotAvailable = -14009
}
