import type { IconName } from '../pages/Landing/art';

/** The two product pages linked from the header (/HyperRender, /SwiftShader). */
export type ProductName = 'HyperRender' | 'SwiftShader';

export interface ProductContent {
  title: string;
  description: string;
  eyebrow: string;
  headline: string;
  lead: string;
  highlights: { icon: IconName; title: string; text: string }[];
  sections: { title: string; paragraphs: string[]; points?: string[] }[];
  cta: { title: string; text: string; contact?: boolean };
}

export const PRODUCTS: Record<ProductName, ProductContent> = {
  HyperRender: {
    title: 'HyperRender — your own Unreal Engine workstation in the cloud · Hyperdesk',
    description:
      'HyperRender is a personal cloud machine with an Nvidia T4 GPU and Unreal Engine, used from Chrome. Buy monthly hours, top up anytime, ready within 5 minutes of payment.',
    eyebrow: 'For creators, freelancers and learners',
    headline: 'HyperRender: your own Unreal Engine workstation in the cloud',
    lead: 'One dedicated GPU machine, set up for Unreal Engine and kept just for you. Open it from a Chrome tab on any computer, work as long as you need and pay only for the hours it runs.',
    highlights: [
      { icon: 'gpu', title: 'Dedicated GPU', text: 'An Nvidia T4 with 16 GB of video memory, 4 CPU cores and 16 GB of RAM, not shared with anyone while you work.' },
      { icon: 'clock', title: 'Ready in 5 minutes', text: 'Your machine is set up within 5 minutes of payment. Later starts take about 3 to 5 minutes.' },
      { icon: 'folder', title: 'Your projects stay', text: 'Stopping the machine keeps its home folder, so every session picks up where the last one ended.' },
      { icon: 'hours', title: 'Hours by the minute', text: 'Runtime is counted per minute while the machine is online, never while it is stopped.' },
    ],
    sections: [
      {
        title: 'How your hours work',
        paragraphs: [
          'You buy runtime as monthly packs. The hours of a purchase can be used for one month from the day you buy them; hours left after that expire and do not carry forward.',
          'Need more? Top up anytime: a new pack adds its hours to the same machine immediately, and the hours that expire first are always used first.',
        ],
        points: [
          'The dashboard shows your hours left and your machine’s state at all times',
          'When your hours run out the machine stops safely; top up to start it again',
          'After 20 minutes without use the machine stops on its own, with a warning 5 minutes before',
        ],
      },
      {
        title: 'What you need',
        paragraphs: [
          'Google Chrome and a stable internet connection of about 2 mbps. That is all: the specifications of your own computer do not matter, because Unreal Engine runs on the cloud machine, not on your device.',
          'HyperRender is available in Germany, India, Spain and the United Kingdom, with prices in your local currency.',
        ],
      },
    ],
    cta: { title: 'Set up your HyperRender machine', text: 'Choose your country, pick your hours and be working in Unreal Engine within minutes.' },
  },
  SwiftShader: {
    title: 'SwiftShader — Unreal Engine cloud machines for your class · Hyperdesk',
    description:
      'SwiftShader gives instructors one Unreal Engine cloud machine per student, for 1 to 40 concurrent students, started and stopped together and used from Chrome.',
    eyebrow: 'For instructors, schools and training teams',
    headline: 'SwiftShader: a GPU lab for your whole class, in the browser',
    lead: 'Give every student a high-end Unreal Engine machine for the length of your course. No lab to build, no installs on student laptops: they sign in and connect from Chrome.',
    highlights: [
      { icon: 'users', title: '1 to 40 students', text: 'Choose how many students work at the same time; each gets a dedicated machine.' },
      { icon: 'class', title: 'Start all, stop all', text: 'Start every machine of the course with one click before class and stop them together afterwards.' },
      { icon: 'book', title: 'Your class list', text: 'Upload your students’ e-mail addresses as a .csv or .txt file; only those students can connect.' },
      { icon: 'shield', title: 'Course dates', text: 'Set a start and end date. Machines can be started from the first day of the course.' },
    ],
    sections: [
      {
        title: 'How a course works',
        paragraphs: [
          'When you set up a course you choose the country, the platform, the number of concurrent students and the course dates, then pick the runtime hours per machine. The price is calculated for your exact course before you pay.',
          'On your dashboard you see every machine of the course and which student is using it. Students see a Connect button that becomes available as soon as you have started the machines.',
        ],
        points: [
          'Students use their own accounts and connect from Chrome on any computer',
          'Each student gets a seat, the same machine each time whenever it is free',
          'Machines that are left unused for 20 minutes stop on their own to save your hours',
        ],
      },
      {
        title: 'Getting a business account',
        paragraphs: [
          'Courses are set up with a business account. Send us a message through Contact Us with your organisation and the size of your class, and we will enable it for you.',
          'SwiftShader is available in Germany, India, Spain and the United Kingdom.',
        ],
      },
    ],
    cta: { title: 'Bring Unreal Engine to your classroom', text: 'Tell us about your course and we will get your business account ready.', contact: true },
  },
};
