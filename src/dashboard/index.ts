/** `tickwork/dashboard`: the web dashboard, one Node request handler over a store. */
export { createDashboard, type DashboardHandler, type DashboardOptions } from './dashboard.js';
