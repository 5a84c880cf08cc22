import { dialEarly } from './dial';

dialEarly();
// The Connect page's own code is fetched now too, beside the app's, not once the app has started.
if (location.pathname === '/connect') void import('../pages/Connect').catch(() => undefined);
