package main

import "context"

func duplicateStorm(ctx context.Context, c checkConfig) (checkResult, error) {
	return checkResult{}, errNotBuilt
}

func replayStorm(ctx context.Context, c checkConfig) (checkResult, error) {
	return checkResult{}, errNotBuilt
}

func crashChaos(ctx context.Context, c checkConfig) (checkResult, error) {
	return checkResult{}, errNotBuilt
}
