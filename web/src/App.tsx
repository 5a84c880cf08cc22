import { lazy, Suspense, type ReactNode } from 'react';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { AuthProvider, useAuth } from './auth/AuthProvider';
import { Spinner } from './components/Spinner';
import Landing from './pages/Landing';

// The landing page ships in the entry chunk (no extra round trip before its first paint at 2 Mbps); every other
// page is its own chunk, so the landing page loads only what it shows (issue 8 size budget).
const Product = lazy(() => import('./pages/Product'));
const Legal = lazy(() => import('./pages/Legal'));
const Faqs = lazy(() => import('./pages/Faqs'));
const ResetPassword = lazy(() => import('./pages/ResetPassword'));
const VerifyEmail = lazy(() => import('./pages/VerifyEmail'));
const Dashboard = lazy(() => import('./pages/Dashboard'));
const Welcome = lazy(() => import('./pages/Welcome'));
const Setup = lazy(() => import('./pages/Setup'));
const Profile = lazy(() => import('./pages/Profile'));
const Success = lazy(() => import('./pages/Success'));
const Failed = lazy(() => import('./pages/Failed'));
const loadConnect = () => import('./pages/Connect');
// A Connect tab fetches its page's chunk beside the session refresh, not after it (the desktop waits on both).
if (window.location.pathname === '/connect') void loadConnect();
const Connect = lazy(loadConnect);
const Admin = lazy(() => import('./pages/Admin'));
const Wall = lazy(() => import('./pages/Wall'));
const Receipts = lazy(() => import('./pages/Receipts'));

const queryClient = new QueryClient({ defaultOptions: { queries: { retry: 1, refetchOnWindowFocus: true } } });

/**
 * Signed-out visitors to a signed-in-only route go to / (spec §2). `early`: the page shows while the session is
 * still being checked (the Connect tab dials the desktop with the ticket its dashboard handed over meanwhile).
 */
function RequireAuth({ children, early = false }: { children: ReactNode; early?: boolean }) {
  const { status } = useAuth();
  if (status === 'loading' && !early) return <Spinner label="Loading" center />;
  if (status === 'signedOut') return <Navigate to="/" replace />;
  return <>{children}</>;
}

/** The operator console: signed-out visitors go to / like any guarded route; signed-in users without the admin
 *  claim get what an unknown route gives (also /). The server checks the claim on every call regardless. */
function RequireAdmin({ children }: { children: ReactNode }) {
  const { status, user } = useAuth();
  if (status === 'loading') return <Spinner label="Loading" center />;
  if (status === 'signedOut' || !user?.admin) return <Navigate to="/" replace />;
  return <>{children}</>;
}

export function App() {
  return (
    <QueryClientProvider client={queryClient}>
      <AuthProvider>
        <BrowserRouter>
          <Suspense fallback={<Spinner label="Loading" center />}>
            <Routes>
              <Route path="/" element={<Landing />} />
              <Route path="/HyperRender" element={<Product name="HyperRender" />} />
              <Route path="/SwiftShader" element={<Product name="SwiftShader" />} />
              <Route path="/terms" element={<Legal page="terms" />} />
              <Route path="/privacy" element={<Legal page="privacy" />} />
              <Route path="/refund-policy" element={<Legal page="refund" />} />
              <Route path="/about" element={<Legal page="about" />} />
              <Route path="/faqs" element={<Faqs />} />
              <Route path="/reset-password" element={<ResetPassword />} />
              <Route path="/verify-email" element={<VerifyEmail />} />
              <Route path="/dashboard" element={<RequireAuth><Dashboard /></RequireAuth>} />
              <Route path="/welcome" element={<RequireAuth><Welcome /></RequireAuth>} />
              <Route path="/setup" element={<RequireAuth><Setup /></RequireAuth>} />
              <Route path="/profile" element={<RequireAuth><Profile /></RequireAuth>} />
              <Route path="/receipts" element={<RequireAuth><Receipts /></RequireAuth>} />
              <Route path="/receipts/:orderId" element={<RequireAuth><Receipts /></RequireAuth>} />
              <Route path="/success" element={<RequireAuth><Success /></RequireAuth>} />
              <Route path="/failed" element={<RequireAuth><Failed /></RequireAuth>} />
              <Route path="/connect" element={<RequireAuth early><Connect /></RequireAuth>} />
              <Route path="/wall/:courseId" element={<RequireAuth><Wall /></RequireAuth>} />
              <Route path="/admin/*" element={<RequireAdmin><Admin /></RequireAdmin>} />
              <Route path="*" element={<Navigate to="/" replace />} />
            </Routes>
          </Suspense>
        </BrowserRouter>
      </AuthProvider>
    </QueryClientProvider>
  );
}
