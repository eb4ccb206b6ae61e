/** `tickwork/testing`: the fake clock and the store conformance suite, whole (`storeConformance`) or per capability. */
export { FakeClock } from './fake-clock.js';
export {
  describeJobStore,
  describeLock,
  describeNotifications,
  describeRunQueue,
  storeConformance,
  type ConformanceAssertion,
  type ConformanceTestApi,
  type LockConformanceOptions,
  type StoreConformanceOptions,
} from './conformance/index.js';
