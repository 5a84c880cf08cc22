import { useQuery } from '@tanstack/react-query';
import type { ComponentType } from 'react';
import type { User } from '@hyperdesk/contract';
import { packsForLocationQuery } from '../../api/catalog';
import { packCostQuery, rechargePack, type CourseQuoteParams } from '../../api/courses';
import { rechargeWallet } from '../../api/wallet';
import { courseSpan } from './courseDates';
import { CourseStep } from './CourseStep';
import type { RuntimeOption, SetupState, StepId, StepProps } from './flowState';

export type { StepProps };

export interface RuntimeOptions {
  status: 'idle' | 'loading' | 'error' | 'ready';
  options: RuntimeOption[];
}

/**
 * What differs between the individual and the business setup (spec §2, §6): title, steps, which platforms may be
 * picked, where the runtime options come from and which checkout call pays for them. The page renders any flow.
 */
export interface SetupFlow {
  kind: 'individual' | 'business';
  title: string;
  steps: readonly StepId[];
  disabledPlatformsSelectable: boolean;
  runtimeNotes: readonly string[];
  /** A hook: called on every render of the page with the current choices. */
  useRuntimeOptions(state: SetupState): RuntimeOptions;
  /** Starts the hosted checkout; null when no checkout URL came back (nothing happens then, spec §8). */
  checkout(state: SetupState): Promise<string | null>;
  /** The business 'Set your Course Details' step. */
  CourseStep?: ComponentType<StepProps>;
}

export const TOP_UP_NOTE = 'You can top up anytime in case you run out.';

export const individualFlow: SetupFlow = {
  kind: 'individual',
  title: "Let's set up your Cloud Machine",
  steps: ['country', 'platform', 'runtime', 'pay'],
  disabledPlatformsSelectable: false,
  runtimeNotes: [TOP_UP_NOTE],
  useRuntimeOptions(state) {
    const { country, platform } = state;
    const q = useQuery({
      ...packsForLocationQuery(country ?? 'UK', platform ?? 'Unreal Engine'),
      enabled: Boolean(country && platform),
    });
    if (!country || !platform) return { status: 'idle', options: [] };
    if (q.isPending) return { status: 'loading', options: [] };
    if (q.isError || !q.data.length) return { status: 'error', options: [] };
    return { status: 'ready', options: q.data.map((p) => ({ hours: p.hours, price: p.price, packId: p.packId })) };
  },
  async checkout(state) {
    if (!state.runtime?.packId) return null;
    const { url } = await rechargeWallet(state.runtime.packId);
    return url || null;
  },
};

/** The cost and checkout parameters of a business order, once country, platform and course are chosen. */
function courseQuote(state: SetupState): CourseQuoteParams | null {
  const { country, platform, course } = state;
  if (!country || !platform || !course) return null;
  const span = courseSpan(course, country);
  return {
    Platform: platform,
    VMs: course.studentsCount,
    StartAt: span.startDate,
    ExpiresAt: span.expiresAt,
    Region: country,
  };
}

/**
 * Business users buy a course: VMs machines with the chosen runtime each, priced by the server (POST /pack/cost)
 * and paid through POST /pack/recharge. Course hours are bound to the course dates, not to a month, so the
 * 'change this next month' note is not shown; the top-up note is (spec §2).
 */
export const businessFlow: SetupFlow = {
  kind: 'business',
  title: "Set up your company's Cloud Machines",
  steps: ['country', 'platform', 'course', 'runtime', 'pay'],
  disabledPlatformsSelectable: true,
  runtimeNotes: [TOP_UP_NOTE],
  CourseStep,
  useRuntimeOptions(state) {
    const params = courseQuote(state);
    const q = useQuery({
      ...packCostQuery(params ?? { Platform: 'Unreal Engine', VMs: 1, StartAt: 0, ExpiresAt: 0, Region: 'UK' }),
      enabled: params !== null,
    });
    if (!params) return { status: 'idle', options: [] };
    if (q.isPending) return { status: 'loading', options: [] };
    if (q.isError || !q.data.length) return { status: 'error', options: [] };
    return { status: 'ready', options: q.data };
  },
  async checkout(state) {
    const params = courseQuote(state);
    if (!params || !state.runtime) return null;
    const { url } = await rechargePack({ ...params, TotalHours: state.runtime.hours, Price: state.runtime.price });
    return url || null;
  },
};

/** The flow a user gets: business users (the instructor claim, spec §4) set up a course. */
export function flowFor(user: User | null): SetupFlow {
  return user?.instructor ? businessFlow : individualFlow;
}
