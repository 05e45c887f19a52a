from setuptools import find_packages, setup

setup(
    name='opencompass_lveval',
    version='0.1.0',
    description='LV-Eval and Ada-LEval long-context benchmarks for OpenCompass, scored exactly '
                'like the official code',
    long_description=open('README.md', encoding='utf-8').read(),
    long_description_content_type='text/markdown',
    python_requires='>=3.10',
    packages=find_packages(include=['opencompass_lveval', 'opencompass_lveval.*']),
    install_requires=[
        'opencompass==0.5.4',
        # opencompass 0.5.4 pins numpy 1.26; pyarrow >= 21 refuses it and `import
        # opencompass.datasets` fails, so pyarrow stays below 21.
        'pyarrow>=14,<21',
        'numpy>=1.26,<2',
        'datasets>=2.19',
        'pandas',
        # The official metrics: cuts and ROUGE-L differ between versions, so both are exact pins.
        'jieba==0.42.1',
        'rouge==1.0.1',
        'tqdm',
    ],
    extras_require={
        'test': ['pytest>=7'],
        'hf': ['huggingface_hub'],
        'vllm': ['vllm'],
    },
    entry_points={'console_scripts': ['lveval=opencompass_lveval.cli:main']},
)
