package redisstore

// RedisParkedWaits is how many Waits on s found their journal with nothing
// new and are blocked until an XREAD wakes them, so a test can append only
// once its waiters are parked, and know the XREAD path woke them.
func RedisParkedWaits(s *RedisStore) int64 { return s.waits.parked.Load() }

// ParseSentinelURL is parseSentinelURL.
var ParseSentinelURL = parseSentinelURL
