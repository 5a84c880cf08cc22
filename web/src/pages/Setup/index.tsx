import { useReducer } from 'react';
import { useAuth } from '../../auth/AuthProvider';
import { AppLayout } from '../../components/AppLayout';
import { CountryStep } from './CountryStep';
import { courseSummary } from './courseDates';
import { flowFor, type SetupFlow } from './flows';
import { amountOf, initialSetup, setupReducer, type StepId } from './flowState';
import { OrderSummary } from './OrderSummary';
import { PaymentBadge } from './PaymentBadge';
import { PayStep } from './PayStep';
import { PlatformStep } from './PlatformStep';
import { RuntimeStep } from './RuntimeStep';
import { SetupFaq } from './SetupFaq';
import styles from './Setup.module.css';

export default function Setup() {
  const { user } = useAuth();
  const flow = flowFor(user);
  return <SetupPage key={flow.kind} flow={flow} />;
}

function SetupPage({ flow }: { flow: SetupFlow }) {
  const [state, dispatch] = useReducer(setupReducer, flow.steps, initialSetup);
  const runtime = flow.useRuntimeOptions(state);

  const renderStep = (id: StepId, index: number) => {
    const props = { state, dispatch, number: index + 1 };
    switch (id) {
      case 'country':
        return <CountryStep key={id} {...props} />;
      case 'platform':
        return <PlatformStep key={id} {...props} disabledSelectable={flow.disabledPlatformsSelectable} />;
      case 'course':
        return flow.CourseStep ? <flow.CourseStep key={id} {...props} /> : null;
      case 'runtime':
        return <RuntimeStep key={id} {...props} runtime={runtime} notes={flow.runtimeNotes} />;
      case 'pay':
        return <PayStep key={id} {...props} flow={flow} />;
    }
  };

  return (
    <AppLayout
      title={flow.title}
      sidebar={
        <OrderSummary
          title="Summary"
          country={state.country}
          platform={state.platform}
          course={state.course && state.country ? courseSummary(state.course, state.country) : null}
          hours={state.runtime?.hours ?? null}
          total={amountOf(state)}
          empty="All your selections will be shown here"
          footer={<PaymentBadge />}
        />
      }
    >
      <div className={styles.main}>
        <ol className={styles.steps}>
          {flow.steps.map((id, i) => (
            <li key={id}>{renderStep(id, i)}</li>
          ))}
        </ol>
        <SetupFaq />
      </div>
    </AppLayout>
  );
}
