// nnp/data.hpp - PyTorch's torch.utils.data in C++:
//   nnp/data/dataset.hpp     Example, Dataset, TensorDataset, Subset, random_split
//   nnp/data/dataloader.hpp  DataLoader (batch_size, shuffle, drop_last, collate, workers)
//   nnp/data/csv.hpp         read_csv: a CSV file as features and labels
// and nnp/generator.hpp for Generator and randperm.
#pragma once

#include <nnp/data/csv.hpp>
#include <nnp/data/dataloader.hpp>
#include <nnp/data/dataset.hpp>
#include <nnp/generator.hpp>
