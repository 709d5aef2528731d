package main

import "context"

func faultSoak(ctx context.Context, c checkConfig) (checkResult, error) {
	return checkResult{}, errNotBuilt
}

func webhookOutage(ctx context.Context, c checkConfig) (checkResult, error) {
	return checkResult{}, errNotBuilt
}

func pciBOLA(ctx context.Context, c checkConfig) (checkResult, error) {
	return checkResult{}, errNotBuilt
}

func fuzz(ctx context.Context, c checkConfig) (checkResult, error) {
	return checkResult{}, errNotBuilt
}
